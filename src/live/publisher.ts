import type { Redis } from 'ioredis';

/** One live message: an MQTT topic and its JSON payload. */
export interface LiveMessage {
  topic: string;
  payload: unknown;
}

/** The Redis channel every service process's broker listens on. */
export function liveChannel(prefix: string): string {
  return `${prefix}live`;
}

/**
 * Publishes live messages (run starts, results, logs) for clients following a run. Any process can publish
 * (runners included): the message goes through Redis to every service process's broker. Live messages are a
 * view of results that are also stored; one lost with Redis down is logged by the caller, never retried.
 */
export class LivePublisher {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  async publish(topic: string, payload: unknown): Promise<void> {
    await this.redis.publish(liveChannel(this.prefix), JSON.stringify({ topic, payload } satisfies LiveMessage));
  }
}
