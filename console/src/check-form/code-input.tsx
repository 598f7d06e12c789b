import { useEffect, useRef, useState } from 'preact/hooks';
import { useFormState } from '../forms/form';

/**
 * A script field in a real code editor (CodeMirror 6: JavaScript and TypeScript highlighting, brackets, search,
 * undo, the keyboard's Tab kept for leaving the field unless Escape was not pressed first). The editor loads on
 * first use (its own file); until then, and if it cannot load, the field is a plain text area holding the same text.
 */
export function CodeInput({ path, label, hint, rows = 10 }: { path: string; label: string; hint?: string; rows?: number }) {
  const form = useFormState();
  const host = useRef<HTMLDivElement>(null);
  const editor = useRef<{ setText: (t: string) => void; destroy: () => void; text: () => string } | null>(null);
  const [failed, setFailed] = useState(false);
  const value = String(form.value(path) ?? '');
  const id = `code-${path.replace(/[^\w-]/g, '-')}`;
  const error = form.error(path);

  useEffect(() => {
    let live = true;
    import('./code-editor')
      .then(({ mountEditor }) => {
        if (!live || !host.current) return;
        editor.current = mountEditor(host.current, {
          text: value,
          label,
          describedBy: `${id}-note`,
          minLines: rows,
          onChange: (t) => form.set(path, t),
        });
      })
      .catch(() => setFailed(true));
    return () => {
      live = false;
      editor.current?.destroy();
      editor.current = null;
    };
  }, []);
  // A draft replaced from outside (a clone, a reset) shows in the editor.
  useEffect(() => {
    if (editor.current && editor.current.text() !== value) editor.current.setText(value);
  }, [value]);

  return (
    <div class={`field ${error ? 'invalid' : ''}`}>
      <span class="label" id={`${id}-label`}>
        {label}
      </span>
      {failed ? (
        <textarea
          aria-labelledby={`${id}-label`}
          aria-describedby={`${id}-note`}
          rows={rows}
          value={value}
          onInput={(e) => form.set(path, (e.target as HTMLTextAreaElement).value)}
        />
      ) : (
        <div class="code-editor" ref={host} data-path={path} style={{ minHeight: `${rows * 1.45}em` }} />
      )}
      <span id={`${id}-note`} class={error ? 'field-error' : 'hint'} role={error ? 'alert' : undefined}>
        {error ?? (hint ? `${hint.replace(/\.$/, '')}. ` : '')}
        {!error && 'Press Escape, then Tab, to leave the editor.'}
      </span>
    </div>
  );
}
