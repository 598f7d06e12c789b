import { describe, expect, it } from 'vitest';
import { targetHost } from '../model/checks.js';
import { URL_FORMATS } from './formats.js';

describe('URL formats', () => {
  it('http-url-template: http(s) with a host, a path, or led by a placeholder; nothing else', () => {
    const ok = URL_FORMATS['http-url-template']!;
    for (const v of [
      'https://shop.test',
      'http://127.0.0.1:3000/x?y=1',
      'https://[::1]/',
      '/health',
      '{{BASE}}/x',
      '{{{BASE_URL}}}/health',
      '{{ BASE_URL }}/x',
      'https://{{HOST}}/{{PATH}}',
      'https://shop.test/{{ID}}',
      'https://{{HOST}}:{{PORT}}/',
      'https://shop.test/?d={{moment "YYYY-MM-DD"}}',
    ])
      expect(ok(v), v).toBe(true);
    for (const v of [
      'not a url',
      'shop.test/x',
      'ftp://shop.test',
      'https://',
      'https:// shop.test',
      '//shop.test/x',
      'https://shop.test/a b',
      'javascript:alert(1)',
      'mailto:a@b.test',
      'https://shop.test/\n',
    ])
      expect(ok(v), v).toBe(false);
  });

  it('host-or-url: a host name or address, with or without a port, or a URL with a host', () => {
    const ok = URL_FORMATS['host-or-url']!;
    for (const v of ['shop.test', 'shop.test.', '10.0.0.7', '::1', '[::1]:443', 'db:5432', 'grpc://grpc.test:50051', 'https://shop.test/x', 'a_b.test'])
      expect(ok(v), v).toBe(true);
    // These runners fill in no placeholders: a {{HOST}} would be looked up as it is.
    for (const v of ['not a host', 'http://', '-shop.test', 'shop..test/x y', '', 'shop.test\r\n', '{{HOST}}', 'shop.test/path']) expect(ok(v), v).toBe(false);
  });

  it('a probe connects to the host a URL names, or to the name as given', () => {
    expect(targetHost('https://shop.test/path')).toBe('shop.test');
    expect(targetHost('grpc://[::1]:50051')).toBe('::1');
    expect(targetHost('shop.test')).toBe('shop.test');
    expect(targetHost('10.0.0.7')).toBe('10.0.0.7');
    expect(targetHost(undefined)).toBe('');
  });
});
