/**
 * What a run created through the REST API of a gateway it did not start (an application, a
 * number), removed at the end in the reverse order, whether the run succeeded or not. A gateway
 * the bench started is thrown away with everything in it, so a local run removes nothing.
 */
export class CreatedResources {
  /** REST paths under the account, such as `Application/123/`, oldest first. */
  private readonly paths: string[] = [];

  constructor(
    private readonly gateway: { baseUrl: string; authId: string; authorization: string },
  ) {}

  /** Notes a resource just created, by its path under the account (`Number/14155550111/`). */
  add(path: string): void {
    this.paths.push(path);
  }

  get count(): number {
    return this.paths.length;
  }

  /**
   * DELETEs every resource noted, newest first; resolves with a line for each that could not be
   * removed (gone already counts as removed).
   */
  async removeAll(): Promise<string[]> {
    const failures: string[] = [];
    while (this.paths.length > 0) {
      const path = this.paths.pop()!;
      const url = `${this.gateway.baseUrl}/v1/Account/${this.gateway.authId}/${path}`;
      try {
        const res = await fetch(url, {
          method: 'DELETE',
          headers: { authorization: this.gateway.authorization },
          signal: AbortSignal.timeout(10_000),
        });
        const text = await res.text();
        if (res.status >= 300 && res.status !== 404)
          failures.push(`DELETE ${path} answered ${res.status}: ${text.slice(0, 200)}`);
      } catch (error) {
        failures.push(`DELETE ${path} failed: ${(error as Error).message}`);
      }
    }
    return failures;
  }

  /**
   * Until the returned function is called, an interrupted run (SIGINT, SIGTERM) removes what it
   * created before it exits.
   */
  removeOnSignal(): () => void {
    const onSignal = (signal: NodeJS.Signals) => {
      console.log(`${signal}: removing what the run created on the gateway ...`);
      void this.removeAll().then((failures) => {
        for (const line of failures) console.error(line);
        process.exit(signal === 'SIGINT' ? 130 : 143);
      });
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    return () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    };
  }
}
