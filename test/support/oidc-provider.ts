import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import Provider from 'oidc-provider';

/** A person the provider knows: their subject, email and groups. */
export interface ProviderPerson {
  sub: string;
  email: string;
  name?: string;
  groups?: string[];
  /** true unless told; null: the provider does not say (no email_verified claim at all). */
  emailVerified?: boolean | null;
}

/**
 * A real OpenID provider (the `oidc-provider` package) on 127.0.0.1 for the sign-in suites: one confidential
 * client, login without a form (the test names who signs in next), consent given. `tamper` rewrites the ID token of
 * the next token response, re-signed with the provider's own key (a wrong issuer, audience, nonce, an expired token):
 * what a relying party must refuse even when the signature holds.
 */
export async function startOidcProvider(opts: { clientId: string; clientSecret: string; redirectUri: string }) {
  const people = new Map<string, ProviderPerson>();
  let next: string | undefined;
  let tamper: ((claims: Record<string, unknown>) => Record<string, unknown>) | undefined;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };

  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const provider = new Provider(issuer, {
    clients: [
      { client_id: opts.clientId, client_secret: opts.clientSecret, redirect_uris: [opts.redirectUri], token_endpoint_auth_method: 'client_secret_post' },
    ],
    jwks: { keys: [jwk] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'groups'] },
    features: { devInteractions: { enabled: false } },
    findAccount: (_ctx, sub) => {
      const p = people.get(sub);
      return p
        ? {
            accountId: sub,
            claims: () => ({
              sub,
              email: p.email,
              ...(p.emailVerified === null ? {} : { email_verified: p.emailVerified ?? true }),
              name: p.name ?? '',
              groups: p.groups ?? [],
            }),
          }
        : undefined;
    },
    // Consent is given: the grant is made for what the client asks.
    loadExistingGrant: async (ctx) => {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    pkce: { required: () => true },
    ttl: { Interaction: 600, Grant: 600, Session: 600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
  });
  provider.on('server_error', (_ctx, err) => console.error('oidc-provider', err));

  const callback = provider.callback();
  server.on('request', (req, res) => {
    if (req.url?.startsWith('/interaction/')) {
      // Login without a form: the person the test named signs in.
      const accountId = next;
      provider
        .interactionFinished(req, res, accountId ? { login: { accountId } } : { error: 'access_denied', error_description: 'nobody signs in' }, {
          mergeWithLastSubmission: false,
        })
        .catch((err: Error) => {
          res.statusCode = 500;
          res.end(err.message);
        });
      return;
    }
    if (req.url?.startsWith('/token') && tamper) {
      const change = tamper;
      tamper = undefined;
      const chunks: Buffer[] = [];
      const end = res.end.bind(res);
      res.write = ((chunk: unknown) => (chunks.push(Buffer.from(chunk as Buffer)), true)) as typeof res.write;
      res.end = ((chunk?: unknown) => {
        if (chunk && typeof chunk !== 'function') chunks.push(Buffer.from(chunk as Buffer));
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id_token?: string };
        const resign = async () => {
          if (body.id_token) {
            const claims = change(decodeJwt(body.id_token) as Record<string, unknown>);
            body.id_token = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'test-key' }).sign(privateKey);
          }
          const out = JSON.stringify(body);
          res.setHeader('content-length', Buffer.byteLength(out));
          end(out);
        };
        void resign();
        return res;
      }) as typeof res.end;
    }
    callback(req, res);
  });

  return {
    issuer,
    people,
    /** Who signs in at the provider next. */
    signInNext(sub: string | undefined) {
      next = sub;
    },
    /** Rewrites the ID token of the next token response. */
    tamperNext(fn: (claims: Record<string, unknown>) => Record<string, unknown>) {
      tamper = fn;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A browser for redirect chains across two servers: follows redirects by hand, keeping each host's cookies. */
export class CookieBrowser {
  private jars = new Map<string, Map<string, string>>();

  cookie(host: string, name: string): string | undefined {
    return this.jars.get(host)?.get(name);
  }

  /** Puts a cookie in the host's jar (a session the browser holds already). */
  setCookie(host: string, name: string, value: string): void {
    const jar = this.jars.get(host) ?? new Map<string, string>();
    jar.set(name, value);
    this.jars.set(host, jar);
  }

  /** Follows redirects from `url` until an answer that is not one, or one to a host outside `stopAt`'s. */
  async follow(url: string, stopAt?: (next: URL) => boolean): Promise<{ url: URL; res: Response }> {
    let current = new URL(url);
    for (let hops = 0; hops < 20; hops++) {
      const jar = this.jars.get(current.host) ?? new Map<string, string>();
      this.jars.set(current.host, jar);
      const res = await fetch(current, { redirect: 'manual', headers: jar.size ? { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } : {} });
      for (const set of res.headers.getSetCookie()) {
        const [pair, ...attrs] = set.split(';');
        const eq = pair!.indexOf('=');
        const name = pair!.slice(0, eq).trim();
        const value = pair!.slice(eq + 1).trim();
        const gone = !value || attrs.some((a) => /^\s*max-age=0\s*$/i.test(a) || (/^\s*expires=/i.test(a) && Date.parse(a.split('=')[1]!) < Date.now()));
        if (gone) jar.delete(name);
        else jar.set(name, value);
      }
      const location = res.headers.get('location');
      if (res.status < 300 || res.status >= 400 || !location) return { url: current, res };
      const target = new URL(location, current);
      if (stopAt?.(target)) return { url: target, res };
      current = target;
    }
    throw new Error('too many redirects');
  }
}
