"""Submitting, one flow for every front end: the upload checked and decoded once (`uploads`), the request checked
and stored with its queued job (`intake`, and `batch` for concurrent callers), the bot's and the API's entry point
over them (`service`), the CLI's local run (`local`), and the events its owner follows it by (`events`). A fleet run
from the CLI is `core.fleet.submit`."""
