// The registry these machines reach lacks some other-platform optional packages (for example
// @chdb/lib-darwin-arm64), so `npm install` leaves them out of package-lock.json and `npm ci` then
// refuses the lock as out of sync. This adds a lock entry for each missing optional package, with the
// os/cpu its name states, so npm ci skips it on other platforms. Run after every `npm install`:
//   node .ci/lock-missing-optionals.mjs
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const packages = lock.packages;
const PLATFORM = /(darwin|linux|win32|freebsd|android)-(arm64|x64|arm|ia32)(-(gnu|musl))?$/;
let added = 0;
for (const [key, entry] of Object.entries(packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const path = `node_modules/${name}`;
    if (packages[path]) continue;
    const m = PLATFORM.exec(name);
    if (!m) throw new Error(`${key}: optional ${name} is missing and its platform cannot be read from its name`);
    packages[path] = {
      version: String(version).replace(/^[\^~]/, ''),
      cpu: [m[2]],
      ...(m[4] ? { libc: [m[4] === 'gnu' ? 'glibc' : 'musl'] } : {}),
      optional: true,
      os: [m[1]],
    };
    added++;
  }
}
lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1)));
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`added ${added} lock entries`);
