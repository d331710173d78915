// A flame graph (SVG) from a V8 CPU profile, as the benches write them with
// BENCH_SERVER_NODE_ARGS / BENCH_LOYALTY_NODE_ARGS="--cpu-prof --cpu-prof-dir=prof":
//
//   npx tsx bench/flamegraph.ts prof/CPU.….cpuprofile docs/profiles/name.svg ["title"]
//
// Callers at the bottom, callees above; a frame's width is its share of the busy time (idle
// left out). Hover a frame for its name, place and time. Colours: the service's own code
// orange, dependencies yellow, Node's internals grey, garbage collection and native red.
// Frames under 0.1 % of the busy time are merged into their caller.
//
// Read system-call frames (`writev`, `read`) with care: V8's sampler is a thread of the same
// process, and on a busy 2-core VM it tends to run when the main thread sits in a system call,
// so those frames come out several times too wide (docs/profiles/README.md "Caution").
import { readFile, writeFile } from 'node:fs/promises';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}
interface Frame {
  name: string;
  where: string;
  kind: 'own' | 'dep' | 'node' | 'native';
  self: number;
  total: number;
  children: Map<string, Frame>;
}

const WIDTH = 1200;
const ROW = 17;
const COLOURS: Record<Frame['kind'], [string, string]> = { own: ['#f28e2b', '#f7b267'], dep: ['#edc948', '#f3dc84'], node: ['#a0a0a0', '#c4c4c4'], native: ['#e15759', '#ef8f90'] };

function kindOf(url: string, name: string): Frame['kind'] {
  if (!url) return name.startsWith('(') || name === '' ? 'native' : 'node';
  if (url.includes('node_modules')) return 'dep';
  if (url.startsWith('node:')) return 'node';
  return /\/(src|dist)\//.test(url) ? 'own' : 'node';
}

function shortUrl(url: string): string {
  const dep = url.match(/node_modules\/((@[^/]+\/)?[^/]+\/.*)$/);
  if (dep) return dep[1]!;
  const own = url.match(/\/((src|dist)\/.*)$/);
  return own ? own[1]! : url.replace(/^file:\/\//, '');
}

const MAX_SAMPLE_GAP_US = 1_000_000;

function build(profile: Profile): { root: Frame; busy: number } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  // A sample more than a second after the one before it follows a pause of the whole
  // process (bench:http freezes the server it is not measuring with SIGSTOP): that time was
  // spent by nobody, and is left out instead of being charged to whatever ran next.
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    if (delta < MAX_SAMPLE_GAP_US) self.set(id, (self.get(id) ?? 0) + delta);
  });
  const root: Frame = { name: 'all', where: '', kind: 'native', self: 0, total: 0, children: new Map() };
  // Frames of the same function under the same parent are merged (V8 splits them by line).
  const walk = (node: ProfileNode, into: Frame) => {
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') return;
    const name = functionName || '(anonymous)';
    const key = `${name}|${url}`;
    let frame = into.children.get(key);
    if (!frame) {
      frame = { name, where: url ? `${shortUrl(url)}:${lineNumber + 1}` : '', kind: kindOf(url, functionName), self: 0, total: 0, children: new Map() };
      into.children.set(key, frame);
    }
    frame.self += self.get(node.id) ?? 0;
    for (const c of node.children ?? []) walk(byId.get(c)!, frame);
  };
  const top = profile.nodes[0]!;
  for (const c of top.children ?? []) walk(byId.get(c)!, root);
  const sum = (f: Frame): number => (f.total = f.self + [...f.children.values()].reduce((n, c) => n + sum(c), 0));
  return { root, busy: sum(root) };
}

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function render(root: Frame, busy: number, title: string): string {
  const min = busy * 0.001;
  const shown = (f: Frame) => [...f.children.values()].filter((c) => c.total >= min).sort((a, b) => b.total - a.total);
  const depthOf = (f: Frame): number => 1 + Math.max(0, ...shown(f).map(depthOf));
  const rows = depthOf(root);
  // Callers at the bottom: level 0 is the last row.
  const yOf = (level: number) => 24 + (rows - 1 - level) * ROW;
  const rects: string[] = [];
  const draw = (f: Frame, x: number, level: number, i: number) => {
    const w = (f.total / busy) * WIDTH;
    const fill = COLOURS[f.kind][i % 2];
    const pct = ((100 * f.total) / busy).toFixed(1);
    const label = `${f.name}${f.where ? ` (${f.where})` : ''}: ${(f.total / 1000).toFixed(0)} ms, ${pct} %`;
    const y = yOf(level);
    const text = w > 40 ? `<text x="${(x + 3).toFixed(1)}" y="${y + 12}">${escape(f.name.slice(0, Math.floor(w / 6.5)))}</text>` : '';
    rects.push(`<g><title>${escape(label)}</title><rect x="${x.toFixed(1)}" y="${y}" width="${Math.max(w - 0.5, 0.5).toFixed(1)}" height="${ROW - 1}" fill="${fill}"/>${text}</g>`);
    let cx = x;
    shown(f).forEach((c, j) => {
      draw(c, cx, level + 1, j);
      cx += (c.total / busy) * WIDTH;
    });
  };
  draw({ ...root, name: `all (${(busy / 1000).toFixed(0)} ms busy)` }, 0, 0, 0);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${24 + rows * ROW + 4}" font-family="monospace" font-size="11">
<rect width="100%" height="100%" fill="#fff"/>
<text x="4" y="16" font-size="13">${escape(title)}</text>
${rects.join('\n')}
</svg>
`;
}

async function main() {
  const [input, output, title] = process.argv.slice(2);
  if (!input || !output) {
    console.error('usage: tsx bench/flamegraph.ts <profile.cpuprofile> <out.svg> ["title"]');
    process.exit(2);
  }
  const profile = JSON.parse(await readFile(input, 'utf8')) as Profile;
  const { root, busy } = build(profile);
  await writeFile(output, render(root, busy, title ?? input));
  const top = [...root.children.values()].sort((a, b) => b.total - a.total).slice(0, 5);
  console.log(`${output}: ${(busy / 1000).toFixed(0)} ms busy; top: ${top.map((f) => `${f.name} ${((100 * f.total) / busy).toFixed(0)} %`).join(', ')}`);
}

await main();
