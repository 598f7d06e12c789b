import * as csstree from 'css-tree';

/** At-rules that fetch something or change how the rest is read; the others (@media, @supports, @keyframes) stay. */
const DROPPED_AT_RULES = new Set(['import', 'namespace', 'charset', 'font-face', 'document', '-moz-document']);
/** Properties that ran code in old browsers. */
const DROPPED_PROPERTIES = /^(-[a-z]+-)?(behavior|binding)$/i;
const DROPPED_FUNCTIONS = /^(-[a-z]+-)?(src|expression|element|image|image-set|cross-fade|paint)$/i;

/**
 * The URLs a stylesheet may load: the service's own (a path on this host, not `//` another) and inline
 * `data:` images. Anything else would make every viewer's browser fetch from elsewhere.
 */
export function allowedCssUrl(value: string): boolean {
  const url = value.trim();
  if (/^data:image\/(png|gif|jpeg|webp|svg\+xml)[;,]/i.test(url)) return true;
  return url.startsWith('/') && !url.startsWith('//') && !url.includes('\\');
}

/**
 * A dashboard's customCSS made safe to inline in its page: parsed as a stylesheet (what does not parse is
 * dropped), with every rule that could load anything from elsewhere removed: @import and @font-face, any
 * declaration with a url() other than the service's own paths and data: images, image-set(), IE expression()
 * and behaviours, Mozilla bindings. `<` is escaped, so the text
 * can never close its <style> element. The page's Content-Security-Policy forbids inline scripts besides.
 */
export function sanitizeCss(input: string | null | undefined): string {
  if (!input) return '';
  const ast = csstree.parse(input, { parseValue: true, onParseError: () => {} });
  csstree.walk(ast, {
    visit: 'Atrule',
    enter(node, item, list) {
      if (list && DROPPED_AT_RULES.has(node.name.toLowerCase())) list.remove(item);
    },
  });
  csstree.walk(ast, {
    visit: 'Declaration',
    enter(node, item, list) {
      if (!list) return;
      let unsafe = DROPPED_PROPERTIES.test(node.property);
      csstree.walk(node, (child) => {
        if (child.type === 'Url' && !allowedCssUrl(child.value)) unsafe = true;
        if (child.type === 'Function' && /^(-[a-z]+-)?url$/i.test(child.name)) unsafe = true; // url() written as a function (escapes)
        if (child.type === 'Function' && DROPPED_FUNCTIONS.test(child.name)) unsafe = true;
        // A value the parser could not read is kept as raw text: it might hide anything.
        if (child.type === 'Raw' && /url\s*\(|expression\s*\(|\\/i.test(child.value)) unsafe = true;
      });
      if (unsafe) list.remove(item);
    },
  });
  return csstree.generate(ast).replace(/</g, '\\3c ');
}
