import type { Config } from '../../platform/config.js';
import { EmbeddedStore } from './embedded.js';
import { ServerStore } from './server.js';
import type { Store } from './store.js';

export type { Store } from './store.js';

export function createStore(config: Config): Store {
  const ch = config.clickhouse;
  if (ch.url) return new ServerStore({ url: ch.url, user: ch.user, password: ch.password, database: ch.database });
  return new EmbeddedStore(config.dataDir);
}
