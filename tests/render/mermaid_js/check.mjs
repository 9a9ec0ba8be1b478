// Parse Mermaid files with the real mermaid.js (in jsdom) and check that each one
// declares exactly the nodes and edges our text has: a label that broke out of its
// quotes would add nodes or edges. Not part of `make test` (it needs node and npm);
// run it with `make mermaid-js`.
//   node check.mjs FILE.mmd...
import fs from 'fs';
import { JSDOM } from 'jsdom';

const dom = new JSDOM('<!doctype html><html><body></body></html>');
globalThis.window = dom.window;
globalThis.document = dom.window.document;
globalThis.DOMParser = dom.window.DOMParser;
globalThis.Element = dom.window.Element;
const { default: mermaid } = await import('mermaid');
mermaid.initialize({ startOnLoad: false });

const NODE = /^ +(n_start|n_end|n_paused|[amt]\d+)[[({]/gm;
const EDGE = /^    \S+ (-->|<-\.->|---|==>|-\.->)/gm;
let failed = 0;
for (const file of process.argv.slice(2)) {
  const text = fs.readFileSync(file, 'utf8');
  try {
    const diagram = await mermaid.mermaidAPI.getDiagramFromText(text);
    const nodes = diagram.db.getVertices().size;
    const edges = diagram.db.getEdges().length;
    const wantNodes = (text.match(NODE) || []).length;
    const wantEdges = (text.match(EDGE) || []).length;
    if (nodes !== wantNodes || edges !== wantEdges) {
      failed++;
      console.log(`FAIL ${file}: ${nodes}/${wantNodes} nodes, ${edges}/${wantEdges} edges`);
    } else {
      console.log(`ok   ${file}: ${nodes} nodes, ${edges} edges`);
    }
  } catch (e) {
    failed++;
    console.log(`FAIL ${file}: ${String(e.message || e).slice(0, 300)}`);
  }
}
try {
  await mermaid.parse('flowchart TD\n    a0["x"] -->|"y| a1\n');
  failed++;
  console.log('FAIL the negative control parsed');
} catch (e) {
  console.log('ok   the negative control is rejected');
}
process.exit(failed ? 1 : 0);
