// The editor's extensions: Tiptap's StarterKit (less its blockquote, which
// holds blocks where a FlowDocument quote holds text), tables, and one node
// per FlowDocument block type that StarterKit lacks (editor/nodes), and
// the paste and drop of files (nodes/media.js), the caret's block kept
// laid out (nodes/caret-block.js) and text typed on a selected card put
// after it (nodes/atom-typing.js).
import { Extension } from '@tiptap/core';
import StarterKit from '@tiptap/starter-kit';
import { Code } from '@tiptap/extension-code';
import { Table, TableCell, TableHeader, TableRow } from '@tiptap/extension-table';
import { BlockID } from './nodes/blockid.js';
import { Quote } from './nodes/quote.js';
import { Callout } from './nodes/callout.js';
import { InlineEquation } from './nodes/inline-equation.js';
import { AtomBlocks } from './nodes/atoms.js';
import { Details, DetailsBody, DetailsSummary } from './nodes/details.js';
import { Column, Columns } from './nodes/columns.js';
import { MediaInput } from './nodes/media.js';
import { CaretBlock } from './nodes/caret-block.js';
import { AtomTyping } from './nodes/atom-typing.js';

export function extensions() {
  return [
    StarterKit.configure({
      blockquote: false,
      heading: { levels: [1, 2, 3, 4, 5, 6] },
      link: { openOnClick: false, autolink: true, defaultProtocol: 'https', protocols: ['http', 'https', 'mailto'] },
      codeBlock: { languageClassPrefix: 'language-' },
      trailingNode: false,
      code: false,
    }),
    // FlowDocument lets inline code carry the other marks; Tiptap's code
    // mark excludes them.
    Code.extend({ excludes: '' }),
    Table.configure({ resizable: false }),
    TableRow,
    TableHeader,
    TableCell,
    ListLoose,
    Quote,
    Callout,
    InlineEquation,
    BlockID,
    Details,
    DetailsSummary,
    DetailsBody,
    Columns,
    Column,
    MediaInput,
    CaretBlock,
    AtomTyping,
    ...AtomBlocks,
  ];
}

// ListLoose keeps a FlowDocument list's `loose` attribute (items spaced as
// paragraphs) on the editor's lists.
const ListLoose = Extension.create({
  name: 'listLoose',
  addGlobalAttributes() {
    return [{
      types: ['bulletList', 'orderedList'],
      attributes: { loose: { default: false, parseHTML: () => false, renderHTML: () => ({}) } },
    }];
  },
});
