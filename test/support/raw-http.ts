import net from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: any;
  text: string;
}

/**
 * Sends bytes exactly as given (repeated headers, control characters, invalid UTF-8), which fetch and
 * node:http normalise or refuse, and reads the whole answer of a `Connection: close` request.
 */
export function rawRequest(baseUrl: string, head: string, body: Buffer = Buffer.alloc(0)): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => {
      socket.write(Buffer.concat([Buffer.from(head, 'latin1'), body]));
    });
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const split = raw.indexOf('\r\n\r\n');
      const [statusLine, ...lines] = raw.slice(0, split).split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      let text = raw.slice(split + 4);
      if (headers['transfer-encoding'] === 'chunked') text = dechunk(text);
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        // not JSON: keep the text
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: parsed, text });
    });
  });
}

function dechunk(text: string): string {
  let out = '';
  let rest = text;
  for (;;) {
    const eol = rest.indexOf('\r\n');
    const size = parseInt(rest.slice(0, eol), 16);
    if (!size) return out;
    out += rest.slice(eol + 2, eol + 2 + size);
    rest = rest.slice(eol + 2 + size + 2);
  }
}

/** A request head with `Connection: close`; `headers` may repeat a name. */
export function requestHead(method: string, path: string, headers: [string, string][]): string {
  return `${method} ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n${headers.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
}
