// Trusted Types (the CSP says require-trusted-types-for 'script'). The app
// itself never writes HTML: it builds DOM nodes (dom.js). ProseMirror does
// write HTML in exactly one place, its clipboard parser, which puts pasted
// HTML into a detached <template> of an inert document to read it; the
// default policy lets that through (the nodes are then read through the
// schema's parse rules, which keep only what the schema knows: no script
// survives into the page). Script and script URLs are never allowed.
export function installTrustedTypes() {
  const tt = globalThis.trustedTypes;
  if (!tt || !tt.createPolicy) return;
  try {
    tt.createPolicy('default', {
      createHTML: (s) => s,
      createScript: () => null,
      createScriptURL: () => null,
    });
  } catch {
    // Already made (a second call): nothing to do.
  }
}
