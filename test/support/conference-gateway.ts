import { expect } from 'vitest';
import { ClientApp } from './client-app.js';
import { startGateway, type TestGateway } from './gateway.js';
import { openSipPeer, type SipPeer } from './sip-peer.js';
import { TonePhone } from './tone-phone.js';

/**
 * What the conference tests start with: a gateway listening on loopback, an application whose
 * answer URL is the client app's `/answer` (and `/hangup` when asked), a number routed to it,
 * and a SIP peer to call that number from.
 */
export class ConferenceGateway {
  private constructor(
    readonly gw: TestGateway,
    readonly app: ClientApp,
    readonly sip: SipPeer,
    private readonly number: string,
  ) {}

  /** The phones callTonePhones called: close() hangs up those still in a call and closes all. */
  private readonly phones: TonePhone[] = [];

  static async start(options: {
    number: string;
    appName: string;
    hangupUrl?: boolean;
    env?: Record<string, string>;
  }): Promise<ConferenceGateway> {
    const app = await ClientApp.start();
    const gw = await startGateway({ listen: true, ...(options.env && { env: options.env }) });
    const sip = await openSipPeer();
    const application = await gw.request('POST', `/v1/Account/${gw.main.id}/Application/`, {
      json: {
        app_name: options.appName,
        answer_url: `${app.baseUrl}/answer`,
        ...(options.hangupUrl && { hangup_url: `${app.baseUrl}/hangup` }),
      },
    });
    const added = await gw.request('POST', `/v1/Account/${gw.main.id}/Number/`, {
      json: {
        numbers: options.number,
        carrier: 'Own SIP',
        region: 'West',
        app_id: application.body.app_id,
      },
    });
    expect(added.status).toBeLessThan(300);
    return new ConferenceGateway(gw, app, sip, options.number);
  }

  /** A phone per tone calling the number one after the other, from `phone0`, `phone1`… */
  async callTonePhones(tones: readonly number[]): Promise<TonePhone[]> {
    const phones: TonePhone[] = [];
    const port = this.gw.gateway.sip.addresses.udp.port;
    for (const [i, hz] of tones.entries()) {
      phones.push(
        await TonePhone.call(this.sip, { user: this.number, port, from: `phone${i}` }, hz),
      );
    }
    this.phones.push(...phones);
    return phones;
  }

  async close(): Promise<void> {
    for (const phone of this.phones) {
      await phone.hangup();
      await phone.close();
    }
    this.sip.stack.close();
    await this.gw.close();
    await this.app.close();
  }
}
