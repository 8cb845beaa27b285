// The submit form of a problem's page: a CodeMirror editor over the form's textarea, the starter for the chosen
// language and dtype, a file upload, the submission through the web's same-origin proxy of the public API, and
// the run followed live through its Server-Sent Events until the result, then the result page.
//
// Bundled once into web/static/editor.js (web/static/VENDORED.md says how). The page holds no inline script:
// everything here is wired by ids and data attributes that web/editor.py writes.

import { EditorState, Compartment } from "@codemirror/state";
import {
  EditorView,
  keymap,
  lineNumbers,
  highlightActiveLine,
  highlightActiveLineGutter,
  drawSelection,
} from "@codemirror/view";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { syntaxHighlighting, defaultHighlightStyle, bracketMatching, indentOnInput, indentUnit } from "@codemirror/language";
import { cpp } from "@codemirror/lang-cpp";
import { python } from "@codemirror/lang-python";

const EXTENSIONS = { cuda: ".cu", python: ".py", triton: ".py" };
// The editor's look, inside its shadow root (the page's style sheet does not reach there).
const LOOK = EditorView.theme({
  "&": { height: "min(24rem, 60vh)", minHeight: "14rem", fontSize: "0.88rem", backgroundColor: "#fff" },
  "&.cm-focused": { outline: "2px solid #2a5db0", outlineOffset: "-2px" },
  ".cm-scroller": { fontFamily: "ui-monospace, SFMono-Regular, Menlo, monospace", lineHeight: "1.45", overflow: "auto" },
  ".cm-gutters": { backgroundColor: "#f5f6f8", color: "#5f6673", borderRight: "1px solid #e2e2e2" },
  ".cm-activeLine": { backgroundColor: "#f3f6fc" },
  ".cm-activeLineGutter": { backgroundColor: "#e8eef9" },
});
// How long the finished run stays on screen before the result page opens.
const LAND_AFTER_MS = 1500;

function languageSupport(language) {
  return language === "cuda" ? cpp() : python();
}

function text(tag, content, className) {
  const node = document.createElement(tag);
  node.textContent = content;
  if (className) node.className = className;
  return node;
}

// The API's refusal (RFC 9457 problem details) as the user reads it: its detail, else its title.
async function problemText(response) {
  try {
    const body = await response.json();
    return body.detail || body.title || `The server answered ${response.status}.`;
  } catch (_) {
    return `The server answered ${response.status}.`;
  }
}

function setupEditor(form) {
  const textarea = form.querySelector("textarea[name=source]");
  const languageSelect = form.querySelector("select[name=language]");
  const dtypeSelect = form.querySelector("select[name=dtype]");
  const upload = form.querySelector("input[name=upload]");
  const restart = form.querySelector("button[data-action=starter]");
  const note = form.querySelector(".editor-note");
  const language = new Compartment();
  // The text last loaded from a starter or a file: while the editor still holds it, a new choice of language or
  // dtype loads the new starter; once the user has written, their code is kept.
  let loaded = textarea.value;
  let uploadedName = null;
  // Each load (a starter, a file) takes the next number; one that finishes after a later one began is dropped, so
  // a slow starter never lands over the file loaded after it was asked for.
  let generation = 0;

  // The editor lives in a shadow root: CodeMirror then puts its styles in a constructed style sheet adopted by
  // that root, which the page's Content-Security-Policy (style-src 'self', no inline style) allows, where the
  // <style> element it would add to the document's head is refused.
  const host = document.createElement("div");
  host.className = "editor-host";
  textarea.parentNode.insertBefore(host, textarea);
  const shadow = host.attachShadow({ mode: "open" });
  const view = new EditorView({
    parent: shadow,
    root: shadow,
    state: EditorState.create({
      doc: textarea.value,
      extensions: [
        lineNumbers(),
        highlightActiveLineGutter(),
        highlightActiveLine(),
        drawSelection(),
        history(),
        indentOnInput(),
        indentUnit.of("    "),
        bracketMatching(),
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
        LOOK,
        keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
        language.of(languageSupport(languageSelect.value)),
        // tabindex 0 is what a contenteditable element has anyway; said outright, checkers that read only the
        // attribute (axe-core's scrollable-region rule) see that the scrolling editor holds a focusable element.
        EditorView.contentAttributes.of({ "aria-label": "Solution code", "aria-multiline": "true", tabindex: "0" }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) textarea.value = update.state.doc.toString();
        }),
      ],
    }),
  });
  textarea.hidden = true;
  form.classList.add("has-editor");

  function replace(content) {
    view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: content } });
    loaded = content;
  }

  async function loadStarter(force) {
    if (!force && view.state.doc.toString() !== loaded) {
      note.textContent = "Your code is kept; “Start from the starter” replaces it.";
      return;
    }
    const mine = ++generation;
    const url = `${form.dataset.starter}?lang=${encodeURIComponent(languageSelect.value)}&dtype=${encodeURIComponent(dtypeSelect.value)}`;
    const response = await fetch(url, { credentials: "same-origin" });
    const body = await response.text();
    if (mine !== generation) return;
    if (!response.ok) {
      note.textContent = `No starter: ${body}`;
      return;
    }
    if (!force && view.state.doc.toString() !== loaded) return; // written in while it loaded: theirs stays
    replace(body);
    uploadedName = null;
    note.textContent = "";
  }

  languageSelect.addEventListener("change", () => {
    view.dispatch({ effects: language.reconfigure(languageSupport(languageSelect.value)) });
    loadStarter(false);
  });
  dtypeSelect.addEventListener("change", () => loadStarter(false));
  restart.addEventListener("click", () => loadStarter(true));
  upload.addEventListener("change", async () => {
    const file = upload.files && upload.files[0];
    if (!file) return;
    const mine = ++generation;
    const content = await file.text();
    if (mine !== generation) return;
    if (file.name.toLowerCase().endsWith(".cu")) languageSelect.value = "cuda";
    else if (/^\s*(import\s+triton|from\s+triton[\s.])/m.test(content)) languageSelect.value = "triton";
    else languageSelect.value = "python";
    view.dispatch({ effects: language.reconfigure(languageSupport(languageSelect.value)) });
    replace(content);
    uploadedName = file.name;
    note.textContent = `Loaded ${file.name}.`;
  });

  return {
    source: () => view.state.doc.toString(),
    fileName: () => {
      const extension = EXTENSIONS[languageSelect.value] || ".py";
      return uploadedName && uploadedName.toLowerCase().endsWith(extension) ? uploadedName : `solution${extension}`;
    },
  };
}

// What each event says, in a line: the phases as the API names them.
function eventLine(event) {
  switch (event.type) {
    case "submitted":
      return event.position ? `Queued: place ${event.position}.` : "Submitted.";
    case "queue":
      return `Waiting: place ${event.position}` + (event.start_in_s != null ? `, about ${Math.ceil(event.start_in_s)} s.` : ".");
    case "dispatched":
      return `Sent to a runner${event.runner ? ` (${event.runner})` : ""}, attempt ${event.attempt}.`;
    case "running":
      return "Running.";
    case "requeued":
      return "Its runner was lost; it runs again, first in the queue.";
    case "case":
      return caseLine(event.case);
    case "result":
      return `Finished: ${event.result ? event.result.status : event.state}.`;
    default:
      return event.message || `${event.type}.`;
  }
}

function median(timing) {
  return `${timing.runtime_median_us.toPrecision(4)} µs`;
}

// A case as its runner reported it, live: verified (test), timed (benchmark) or a profiler's step.
function caseLine(c) {
  if (!c) return "A case finished.";
  const which = `${c.index + 1} of ${c.count}${c.name ? ` (${c.name})` : ""}`;
  if (c.phase === "test") return `Test ${which}: ${c.passed ? "passed" : "failed"}.`;
  if (c.phase === "benchmark") return `Timed ${which}: ${c.timing ? median(c.timing) : "done"}.`;
  return `Profiling: ${c.message || which}.`;
}

function caseCells(c) {
  if (c.phase === "test") return [c.name, c.passed ? "passed" : "failed", "", c.passed ? "" : c.message || ""];
  if (c.phase === "benchmark" && c.timing) {
    const rate = c.timing.flops ? `${c.timing.gflops.toPrecision(3)} GFLOPS` : `${c.timing.gbps.toPrecision(3)} GB/s`;
    return [c.name, "timed", median(c.timing), rate];
  }
  return null;
}

function caseRows(result) {
  const rows = [];
  const timed = new Map((result.timings || []).map((t) => [t.name, t]));
  for (const test of result.tests || []) {
    const timing = timed.get(test.name);
    rows.push([test.name, test.passed ? "passed" : "failed", timing ? median(timing) : "", test.passed ? "" : test.message || ""]);
  }
  return rows;
}

function follow(panel, accepted) {
  const phases = panel.querySelector("ol.phases");
  const cases = panel.querySelector("tbody");
  const seen = [];
  const key = `arena-run-${accepted.id}`;
  panel.dataset.submission = String(accepted.id);
  panel.dataset.state = "queued";

  function addCase(cells) {
    const row = document.createElement("tr");
    for (const cell of cells) row.appendChild(text("td", cell));
    cases.appendChild(row);
    panel.querySelector("table").hidden = false;
  }

  // The API's events stream: the browser reconnects by itself with Last-Event-ID after a drop, and the API
  // resumes after that event, so nothing is shown twice.
  const source = new EventSource(`/api/v1/submissions/${accepted.id}/events`);
  const onEvent = (message) => {
    const event = JSON.parse(message.data);
    seen.push(event.type);
    sessionStorage.setItem(key, JSON.stringify(seen));
    phases.appendChild(text("li", eventLine(event), `phase ${event.type}`));
    panel.dataset.state = event.state;
    const cells = event.case ? caseCells(event.case) : null;
    if (cells) addCase(cells);
    if (event.type === "result") {
      source.close();
      if (event.result && !cases.children.length) caseRows(event.result).forEach(addCase);
      panel.dataset.finished = "true";
      setTimeout(() => window.location.assign(`/submissions/${accepted.id}`), LAND_AFTER_MS);
    }
  };
  for (const type of ["submitted", "queue", "dispatched", "running", "requeued", "result", "case"]) {
    source.addEventListener(type, onEvent);
  }
  source.onmessage = onEvent;
}

function setupForm(form) {
  const editor = setupEditor(form);
  const error = form.querySelector(".form-error");
  const button = form.querySelector("button[type=submit]");
  const panel = document.getElementById("run");

  form.addEventListener("submit", async (submitEvent) => {
    submitEvent.preventDefault();
    error.hidden = true;
    button.disabled = true;
    const body = new FormData();
    body.append("problem", form.dataset.problem);
    for (const name of ["dtype", "mode", "gpu"]) {
      const field = form.elements[name];
      if (field && field.value) body.append(name, field.value);
    }
    body.append("file", new Blob([editor.source()], { type: "text/plain" }), editor.fileName());
    try {
      const response = await fetch(form.action, {
        method: "POST",
        body,
        credentials: "same-origin",
        headers: { "X-CSRF-Token": form.dataset.csrf, Accept: "application/json" },
      });
      if (response.status !== 202) {
        error.textContent = await problemText(response);
        error.hidden = false;
        button.disabled = false;
        return;
      }
      const accepted = await response.json();
      panel.hidden = false;
      panel.querySelector("h3").textContent = `Submission #${accepted.id} · ${accepted.mode} · ${accepted.gpu_type}`;
      follow(panel, accepted);
      panel.scrollIntoView({ block: "nearest" });
    } catch (failure) {
      error.textContent = `The submission did not reach the server (${failure.message}); try again.`;
      error.hidden = false;
      button.disabled = false;
    }
  });
}

const form = document.getElementById("submit-form");
if (form) setupForm(form);
