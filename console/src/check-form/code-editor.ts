import { indentWithTab } from '@codemirror/commands';
import { javascript } from '@codemirror/lang-javascript';
import { HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { EditorState } from '@codemirror/state';
import { EditorView, keymap } from '@codemirror/view';
import { tags } from '@lezer/highlight';
import { basicSetup } from 'codemirror';

/**
 * CodeMirror 6 with TypeScript (and so JavaScript) highlighting, in the console's colours: each token's colour is a
 * CSS variable the light and dark themes set (styles.css), so the editor follows the theme without a second style.
 */
const highlight = HighlightStyle.define([
  { tag: [tags.keyword, tags.controlKeyword, tags.moduleKeyword, tags.operatorKeyword], color: 'var(--syntax-keyword)' },
  { tag: [tags.string, tags.special(tags.string), tags.regexp], color: 'var(--syntax-string)' },
  { tag: [tags.number, tags.bool, tags.null], color: 'var(--syntax-number)' },
  { tag: [tags.comment, tags.lineComment, tags.blockComment], color: 'var(--syntax-comment)', fontStyle: 'italic' },
  { tag: [tags.function(tags.variableName), tags.function(tags.propertyName)], color: 'var(--syntax-function)' },
  { tag: [tags.typeName, tags.className], color: 'var(--syntax-type)' },
  { tag: tags.propertyName, color: 'var(--syntax-property)' },
]);

const look = EditorView.theme({
  '&': { backgroundColor: 'var(--code)', color: 'var(--text)', border: '1px solid var(--border)', borderRadius: '6px' },
  '&.cm-focused': { outline: '3px solid var(--focus)', outlineOffset: '2px' },
  '.cm-content': { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace', caretColor: 'var(--text)' },
  '.cm-gutters': { backgroundColor: 'var(--panel)', color: 'var(--muted)', borderRight: '1px solid var(--border)' },
  '.cm-activeLine': { backgroundColor: 'color-mix(in srgb, var(--accent) 5%, transparent)' },
  '.cm-activeLineGutter': { backgroundColor: 'color-mix(in srgb, var(--accent) 12%, transparent)' },
  '&.cm-focused .cm-selectionBackground, .cm-selectionBackground': { backgroundColor: 'color-mix(in srgb, var(--accent) 30%, transparent)' },
  '.cm-cursor': { borderLeftColor: 'var(--text)' },
});

export function mountEditor(
  parent: HTMLElement,
  opts: { text: string; label: string; describedBy: string; minLines: number; onChange: (text: string) => void },
) {
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: opts.text,
      extensions: [
        basicSetup,
        // The page's policy allows the editor's <style> element by this answer's nonce (src/console/serve.ts).
        EditorView.cspNonce.of(document.querySelector('meta[name="style-nonce"]')?.getAttribute('content') ?? ''),
        keymap.of([indentWithTab]),
        javascript({ typescript: true }),
        // Long lines wrap: no sideways scrolling inside the field, on a phone least of all.
        EditorView.lineWrapping,
        syntaxHighlighting(highlight),
        look,
        // tabindex: the text is one stop of the keyboard's order, and what scrolls around it is known to hold it.
        EditorView.contentAttributes.of({ 'aria-label': opts.label, 'aria-describedby': opts.describedBy, tabindex: '0' }),
        EditorView.theme({ '.cm-content, .cm-gutter': { minHeight: `${opts.minLines * 1.4}em` } }),
        EditorView.updateListener.of((u) => {
          if (u.docChanged) opts.onChange(u.state.doc.toString());
        }),
      ],
    }),
  });
  return {
    text: () => view.state.doc.toString(),
    setText: (t: string) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: t } }),
    destroy: () => view.destroy(),
  };
}
