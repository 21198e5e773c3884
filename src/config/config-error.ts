/** The environment a configuration is read from: VOXGATE_* names to their raw values. */
export type Env = Record<string, string | undefined>;

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    rule: string,
    value: string,
  ) {
    super(`${variable}=${JSON.stringify(value)} is invalid: ${rule}`);
    this.name = 'ConfigError';
  }
}
