import { Redis } from 'ioredis';

/** A side connection to the benchmark's redis-server, to see what the gateway made it do. */
export class RedisProbe {
  private constructor(private readonly client: Redis) {}

  static async connect(url: string): Promise<RedisProbe> {
    const client = new Redis(url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    await client.connect();
    return new RedisProbe(client);
  }

  /** CPU seconds (user + system) redis-server has used since it started, from INFO cpu. */
  async cpuSeconds(): Promise<number> {
    const info = await this.client.info('cpu');
    const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1]);
    return field('used_cpu_user') + field('used_cpu_sys');
  }

  /** A gateway that silently fell back to the embedded store would make the comparison a lie. */
  async expectKeys(): Promise<void> {
    if ((await this.client.dbsize()) === 0) {
      throw new Error('the gateway on Redis wrote nothing to Redis');
    }
  }

  stop(): Promise<void> {
    this.client.disconnect();
    return Promise.resolve();
  }
}
