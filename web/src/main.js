// Folio's web editor. How screens are registered: each screen is a module
// under screens/ exporting a function ({params, root, go}) that renders into
// root and may return a cleanup function; main.js registers it with
// route(path, screen) (router.js), the path taking :params. Panels
// (panels/) are opened from the editor screen (screens/editor.js) and get
// the screen's context (the document's DocSync, its connection, the api
// client). Layout:
//   router.js            paths -> screens
//   api.js, session.js   the HTTP API client and the token (sessionStorage)
//   sync/connection.js   the WebSocket (/v1/sync, folio.v1.json), reconnects
//   sync/document.js     the protocol's client algorithm for one document
//   sync/changes.js      block-level changes: diff and apply
//   editor/codec.js      FlowDocument <-> editor (ProseMirror JSON)
//   editor/extensions.js Tiptap extensions; editor/nodes/ one node per file
//   editor/editor.js     the Tiptap editor as the DocSync's view
//   screens/             sign-in, document list, editor
//   panels/              side panels of the editor (versions, publish)
import { route, start } from './router.js';
import { session } from './session.js';
import { installTrustedTypes } from './trusted.js';
import { signIn } from './screens/signin.js';
import { docList } from './screens/doclist.js';
import { editorScreen } from './screens/editor.js';
import { personaList, personaScreen } from './screens/personas.js';
import { adminScreen } from './screens/admin.js';

installTrustedTypes();

route('/signin', signIn, { auth: false });
route('/app', docList);
route('/d/:id', editorScreen);
route('/personas', personaList);
route('/personas/:id', personaScreen);
route('/admin', adminScreen);
route('/admin/:tab', adminScreen);

start(document.getElementById('app'), { signedIn: () => !!session.token(), signInPath: '/signin' });
