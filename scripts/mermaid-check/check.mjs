// Parses each Mermaid file given with Mermaid's own parser (in jsdom, as Mermaid needs a
// DOM), and each ```mermaid block of each Markdown file given; exits 1 if any fails.
import fs from "node:fs";
import { JSDOM } from "jsdom";

const dom = new JSDOM("<!doctype html><html><body></body></html>", { pretendToBeVisual: true });
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import("mermaid");
mermaid.initialize({ startOnLoad: false });

let checked = 0;
let failed = 0;
for (const file of process.argv.slice(2)) {
  const text = fs.readFileSync(file, "utf8");
  const diagrams = file.endsWith(".md")
    ? [...text.matchAll(/```mermaid\n([\s\S]*?)```/g)].map((m) => m[1])
    : [text];
  for (const diagram of diagrams) {
    checked++;
    try {
      const parsed = await mermaid.parse(diagram);
      if (!parsed || parsed.diagramType !== "stateDiagram") {
        throw new Error(`parsed as ${parsed && parsed.diagramType}, not a state diagram`);
      }
    } catch (error) {
      failed++;
      console.log(`FAIL ${file}: ${String(error.message || error).split("\n").slice(0, 4).join(" | ")}`);
    }
  }
}
console.log(`mermaid-check: ${checked - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
