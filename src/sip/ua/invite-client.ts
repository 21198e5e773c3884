import { randomInt } from 'node:crypto';
import { randomHex } from '../../core/ids.js';
import type { DialogLayer } from '../dialog/dialog-layer.js';
import { requestTarget, type RequestTarget } from '../dialog/next-hop.js';
import { SDP } from '../dialog/session-body.js';
import {
  SipRequest,
  formatNameAddr,
  headerKey,
  isSipUri,
  parseAddressUri,
  parseNameAddr,
  parseUri,
  type AbsoluteUri,
  type SipUri,
} from '../message/index.js';
import { newTag } from '../transaction/response-to.js';
import type { Destination, TransportLayer } from '../transport/transport-layer.js';
import { localContact } from './local-contact.js';
import { OutgoingInvite, type OutgoingInviteOptions } from './outgoing-invite.js';

/** Headers the UAC writes itself (options.headers may not set them). */
const UAC_HEADERS = new Set([
  'via',
  'from',
  'to',
  'call-id',
  'cseq',
  'contact',
  'max-forwards',
  'content-type',
  'content-length',
  'authorization',
  'proxy-authorization',
]);

/**
 * Places calls (RFC 3261 13.2): each invite() builds an INVITE with our Contact (the public
 * host and the port of the transport it goes out on) and returns the OutgoingInvite that
 * follows it. Options are checked here, so a bad one throws before anything is sent.
 *
 *   const call = client.invite({ target, from, sdp, credentials, delegate: { onProgress } });
 *   const outcome = await call.outcome; // never rejects
 *   if (outcome.answered) outcome.dialog.delegate = { onTerminated, onInfo, onOffer };
 *   else if (outcome.failure.kind === 'auth-failed') ...; // sip_auth_failed
 *   call.cancel(); call.hangup(); // before the answer / either way
 */
export class InviteClient {
  constructor(
    private readonly stack: { readonly transport: TransportLayer },
    private readonly dialogs: DialogLayer,
  ) {}

  invite(options: OutgoingInviteOptions): OutgoingInvite {
    const target = sipUri(options.target, 'target');
    const to = options.to === undefined ? target : anyUri(options.to, 'to');
    const from = anyUri(options.from, 'from');
    if (typeof options.sdp !== 'string' || options.sdp.length === 0) {
      throw new TypeError('Expected an SDP offer for sdp but received none');
    }
    const extra = [...(options.headers ?? [])].map(([name, value]) => {
      if (UAC_HEADERS.has(headerKey(name))) {
        throw new TypeError(`Expected headers the UAC does not write but received ${name}`);
      }
      return [name, value] as const;
    });
    const routeSet = [...(options.routeSet ?? [])];
    const next = routedTarget(target, routeSet);
    const callId = options.callId ?? randomHex(16);
    const fromValue = formatNameAddr({
      displayName: options.fromDisplayName ?? null,
      uri: from,
      tag: newTag(),
    });
    const toValue = formatNameAddr({ displayName: options.toDisplayName ?? null, uri: to });
    const firstSeq = randomInt(1, 10_000);
    const ready = this.where(options.destination, target, routeSet).then((destination) => {
      // RFC 3261 8.1.1.8: a SIPS Request-URI or top Route asks for a SIPS Contact.
      const sips = target.scheme === 'sips' || /^<?sips:/i.test(routeSet[0] ?? '');
      const contact = localContact(
        this.stack.transport,
        destination.protocol,
        options.contactUser,
        sips,
      );
      const build = (attempt: number): SipRequest => {
        const rows: (readonly [string, string])[] = [
          ['Max-Forwards', '70'],
          ...next.routes.map((route) => ['Route', route] as const),
          ['From', fromValue],
          ['To', toValue],
          ['Call-ID', callId],
          // 8.1.1.5: a first CSeq below 2**31; each retry of the INVITE takes the next one.
          ['CSeq', `${firstSeq + attempt} INVITE`],
          ['Contact', `<${contact}>`],
          ['Allow', this.dialogs.allowed().join(', ')],
          ...extra,
          ['Content-Type', SDP],
        ];
        return new SipRequest({
          method: 'INVITE',
          uri: next.uri,
          headers: rows,
          body: options.sdp,
        });
      };
      return { destination, build };
    });
    return new OutgoingInvite({
      layer: this.dialogs,
      destination: ready,
      delegate: options.delegate ?? {},
      credentials: options.credentials,
    });
  }

  private async where(
    destination: Destination | undefined,
    target: SipUri,
    routeSet: readonly string[],
  ): Promise<Destination> {
    return destination ?? this.dialogs.destinationOf(target.raw, routeSet);
  }
}

/**
 * RFC 3261 8.1.2: "If the UAC is configured with a pre-existing route set ... the procedures
 * of Section 12.2.1.1 MUST be followed": the Request-URI and Route values of the INVITE.
 */
function routedTarget(target: SipUri, routeSet: readonly string[]): RequestTarget {
  for (const route of routeSet) {
    let uri: SipUri | AbsoluteUri | null;
    try {
      uri = parseNameAddr(route, 'Route').uri;
    } catch {
      uri = null;
    }
    if (uri === null || !isSipUri(uri)) {
      throw new TypeError(
        `Expected Route values with sip: or sips: URIs for routeSet but received "${route}"`,
      );
    }
  }
  return requestTarget(target.raw, routeSet);
}

function sipUri(text: string, option: string): SipUri {
  try {
    return parseUri(text);
  } catch {
    throw new TypeError(`Expected a sip: or sips: URI for ${option} but received "${text}"`);
  }
}

function anyUri(text: string, option: string): SipUri | AbsoluteUri {
  let uri: SipUri | AbsoluteUri;
  try {
    uri = parseAddressUri(text);
  } catch {
    throw new TypeError(`Expected a URI for ${option} but received "${text}"`);
  }
  if (!isSipUri(uri) && uri.scheme !== 'tel') {
    throw new TypeError(`Expected a sip:, sips: or tel: URI for ${option} but received "${text}"`);
  }
  return uri;
}
