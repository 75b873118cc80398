// Builds web/dist from web/src: app.js (one ES module bundle, minified),
// app.css, index.html naming both with ?v=<content hash>, and LICENSES
// (every npm package in the bundle with its licence). The output depends
// only on the sources and package-lock.json: no timestamps, no absolute
// paths, sorted lists; CI rebuilds it and fails when the bytes differ
// (web/doc.go says why the output is committed).
import * as esbuild from 'esbuild';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, 'dist');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const result = await esbuild.build({
  absWorkingDir: here,
  entryPoints: ['src/main.js'],
  bundle: true,
  format: 'esm',
  minify: true,
  target: ['chrome110', 'firefox110', 'safari16'],
  legalComments: 'none',
  charset: 'utf8',
  metafile: true,
  write: false,
  outfile: 'dist/app.js',
  logLevel: 'warning',
});
const js = result.outputFiles.find((f) => f.path.endsWith('app.js')).contents;

const css = await esbuild.build({
  absWorkingDir: here,
  entryPoints: ['src/styles/app.css'],
  bundle: true,
  minify: true,
  charset: 'utf8',
  write: false,
  outfile: 'dist/app.css',
  logLevel: 'warning',
});
const cssBytes = css.outputFiles[0].contents;

const hash = (b) => createHash('sha256').update(b).digest('hex').slice(0, 16);
writeFileSync(join(out, 'app.js'), js);
writeFileSync(join(out, 'app.css'), cssBytes);
const html = readFileSync(join(here, 'src/index.html'), 'utf8').replace('{{js}}', hash(js)).replace('{{css}}', hash(cssBytes));
writeFileSync(join(out, 'index.html'), html);

// LICENSES: the packages whose code is in app.js.
const pkgs = new Map();
for (const input of Object.keys(result.metafile.inputs)) {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
  if (!m || pkgs.has(m[1])) continue;
  const pj = JSON.parse(readFileSync(join(here, 'node_modules', m[1], 'package.json'), 'utf8'));
  const license = typeof pj.license === 'string' ? pj.license : (pj.license && pj.license.type) || 'UNKNOWN';
  pkgs.set(m[1], { version: pj.version, license });
}
const names = [...pkgs.keys()].sort();
const bad = names.filter((n) => !['MIT', 'ISC', 'BSD-2-Clause', 'BSD-3-Clause', '0BSD', 'Apache-2.0'].includes(pkgs.get(n).license));
if (bad.length) throw new Error(`bundled packages with a licence not allowed here: ${bad.join(', ')}`);
const lines = ['Packages bundled in app.js, with their licences (from each package.json):', ''];
for (const n of names) lines.push(`${n}@${pkgs.get(n).version}\t${pkgs.get(n).license}`);
writeFileSync(join(out, 'LICENSES'), lines.join('\n') + '\n');

for (const f of ['app.js', 'app.css']) {
  const size = readFileSync(join(out, f)).length;
  if (size >= 1 << 20) throw new Error(`${f} is ${size} bytes: over the 1 MiB limit of a tracked file`);
}
