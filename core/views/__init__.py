"""Results as people read them, formatted once for every front end: a timed result's figures (`result`), a
profile's (`profile`), and what a solution printed (`output`). Pure functions of `contract.wire` models: the CLI's
tables, the Discord embeds and the web's pages take their text from here, so one result shows the same digits
wherever it is read."""
