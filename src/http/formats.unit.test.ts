import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { targetHost } from '../model/checks.js';
import { isCanonicalDateTime, URL_FORMATS } from './formats.js';

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

describe('isCanonicalDateTime', () => {
  // ajv-formats' own check, as the service's ajv had it before the canonical form was put in front of it.
  const full = (addFormatsModule as unknown as (ajv: Ajv) => Ajv)(new Ajv()).formats['date-time'] as { validate: (value: string) => boolean };

  it('takes what toISOString writes, and no day or time that does not exist', () => {
    for (const ms of [0, Date.UTC(2024, 1, 29, 23, 59, 59, 999), Date.UTC(2026, 10, 30, 17, 0, 0, 1), Date.UTC(9999, 11, 31)]) {
      expect(isCanonicalDateTime(new Date(ms).toISOString())).toBe(true);
    }
    for (const text of [
      '2026-02-29T00:00:00.000Z',
      '2100-02-29T00:00:00.000Z',
      '2026-13-01T00:00:00.000Z',
      '2026-00-10T00:00:00.000Z',
      '2026-04-31T00:00:00.000Z',
      '2026-01-01T24:00:00.000Z',
      '2026-01-01T23:60:00.000Z',
      '2026-01-01T23:59:60.000Z',
      '2026-01-01t10:00:00.000Z',
      '2026-01-01T10:00:00.000z',
      '2026-01-01T10:00:00.0a0Z',
      '2026-01-01T10:00:00.000+00',
      '+26-01-01T10:00:00.000Z',
      '2026-01-01 10:00:00.000Z',
    ]) {
      expect(isCanonicalDateTime(text), text).toBe(false);
    }
  });

  it('is true only where the full RFC 3339 check is true, over many near-canonical strings', () => {
    const chars = '0123456789-T:.Z+ tz9';
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    let agreed = 0;
    for (let n = 0; n < 50_000; n++) {
      const base = new Date(Math.floor(random() * 8e12)).toISOString().split('');
      // One to three characters changed: most stay near the canonical form, some are still valid.
      for (let k = 0; k < 1 + Math.floor(random() * 3); k++) base[Math.floor(random() * base.length)] = chars[Math.floor(random() * chars.length)]!;
      const text = base.join('');
      if (isCanonicalDateTime(text)) {
        expect(full.validate(text), text).toBe(true);
        agreed++;
      }
    }
    expect(agreed).toBeGreaterThan(1000);
  });
});
