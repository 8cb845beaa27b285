// Writes ../static/editor-licenses.txt: the licence of every package bundled into editor.js (all of the lock file's
// packages but esbuild, which only builds), with its exact version, as the MIT licence asks.
import { readFileSync, writeFileSync, readdirSync } from "node:fs";

const lock = JSON.parse(readFileSync("package-lock.json", "utf8"));
const parts = ["Licences of the packages bundled into editor.js (see VENDORED.md).\n"];
for (const [path, info] of Object.entries(lock.packages)) {
  if (!path || path.includes("esbuild")) continue;
  const name = path.replace(/^node_modules\//, "");
  const file = readdirSync(path).find((f) => /^LICEN[CS]E/i.test(f));
  const text = file ? readFileSync(`${path}/${file}`, "utf8").trim() : `(no licence file; package.json says ${info.license})`;
  parts.push(`== ${name} ${info.version} (${info.license}) ==\n${text}\n`);
}
writeFileSync("../static/editor-licenses.txt", parts.join("\n"));
