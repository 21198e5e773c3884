/**
 * A setting a part of the gateway cannot take: the variable, the rule it breaks and the value
 * given (never a secret: a part that reads one passes what may be shown). Each part reads its
 * own settings next to its code and throws this; the configuration reports it as a
 * ConfigError naming the variable.
 */
export class SettingError extends Error {
  constructor(
    readonly variable: string,
    readonly rule: string,
    readonly value: string,
  ) {
    super(`${variable}=${JSON.stringify(value)} is invalid: ${rule}`);
    this.name = 'SettingError';
  }
}
