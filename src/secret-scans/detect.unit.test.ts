import { describe, expect, it } from 'vitest';
import { credentialName, inline, preview, scanResource, urlCredentials } from './detect.js';

describe('what looks like an inline credential', () => {
  it('knows a credential by its name, and not a name that only contains the letters', () => {
    for (const name of [
      'Authorization',
      'X-Api-Key',
      'api_key',
      'apikey',
      'accessToken',
      'DB_PASSWORD',
      'client_secret',
      'X-Auth-Token',
      'Cookie',
      'privateKey',
      'SESSION_ID',
    ]) {
      expect(credentialName(name), name).toBe(true);
    }
    for (const name of ['Content-Type', 'monkey', 'X-Request-Id', 'keyboard', 'Accept', 'author', 'hostname', 'TOKENIZER_MODE']) {
      expect(credentialName(name), name).toBe(false);
    }
  });

  it('takes a value that only refers to variables as no inline credential', () => {
    for (const value of ['{{TOKEN}}', 'Bearer {{{API_KEY}}}', '${TOKEN}', 'process.env.TOKEN', 'Basic {{CREDS}}', '', 'xxxx', '****'])
      expect(inline(value), value).toBe(false);
    for (const value of ['Bearer abcdef123456', 'hunter2hunter2', 'Token {{PREFIX}}-literal-part']) expect(inline(value), value).toBe(true);
  });

  it('finds a password in a URL and credential-named query parameters', () => {
    expect(urlCredentials('https://user:hunter22@shop.test/x')).toEqual([{ key: null, value: 'hunter22' }]);
    expect(urlCredentials('https://shop.test/?api_key=abc123xyz&q=shoes')).toEqual([{ key: 'api_key', value: 'abc123xyz' }]);
    expect(urlCredentials('https://shop.test/?token={{TOKEN}}&page=2')).toEqual([]);
    expect(urlCredentials('https://user@shop.test/')).toEqual([]);
  });

  it("points at each flagged field of a check as the API shows it, skipping locked and secret entries and the service's own ping URL", () => {
    const check = {
      id: 'c1',
      checkType: 'API',
      heartbeat: { pingUrl: 'http://localhost:3000/ping/0123456789abcdef0123456789abcdef' },
      request: {
        url: 'https://shop.test/api?access_token=s3cr3t-t0ken-value',
        headers: [
          { key: 'Authorization', value: 'Bearer abcdefghijklmnop1234', locked: false },
          { key: 'X-Api-Key', value: '{{{API_KEY}}}', locked: false },
          { key: 'X-Token', value: 'locked-literal-token', locked: true },
          { key: 'Accept', value: 'application/json', locked: false },
        ],
        queryParameters: [{ key: 'sig', value: 'f00dfeedc0ffee', locked: false }],
        basicAuth: { username: 'shop', password: 'correct-horse' },
        body: JSON.stringify({ user: 'shop', nested: { password: 'p4ssw0rd!!' } }),
      },
      localSetupScript: "const k = 'AKIAABCDEFGHIJKLMNOP';\nconst apiKey = process.env.API_KEY;",
      environmentVariables: [
        { key: 'DB_PASSWORD', value: 'plain-db-password', locked: false, secret: false },
        { key: 'SECRET_ONE', value: '', locked: false, secret: true },
        { key: 'LOCKED_PASSWORD', value: 'kept-locked', locked: true, secret: false },
      ],
    };
    const found = scanResource(check).map((f) => `${f.fieldPath} ${f.fieldKey ?? '-'}`);
    expect(found.sort()).toEqual(
      [
        'environmentVariables[0].value DB_PASSWORD',
        'localSetupScript -',
        'request.basicAuth.password -',
        'request.body password',
        'request.headers[0].value Authorization',
        'request.queryParameters[0].value sig',
        'request.url access_token',
      ].sort(),
    );
  });

  it('finds tokens of known shapes anywhere, and never previews a whole value', () => {
    const snippet = { id: 7, name: 'login', script: `await page.fill('#token', 'ghp_${'a'.repeat(36)}')` };
    const [f] = scanResource(snippet);
    expect(f).toMatchObject({ fieldPath: 'script', fieldKey: null });
    expect(preview(f!.value)).toBe('ghp_…aa');
    expect(preview('short')).toBe('…');
    expect(preview('sixsix')).toBe('si…');
  });
});
