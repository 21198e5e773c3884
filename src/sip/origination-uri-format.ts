/**
 * The destinations an origination URI may name (the SIP document): an IPv4 address or an FQDN,
 * each with an optional port, or sip:<user>@<host>[:port].
 */
export const URI_FORMATS =
  'an IPv4 address, an IPv4 address with :port, an FQDN, an FQDN with :port, ' +
  'or sip:<user>@<host> where the host may carry a :port';

const IPV4_OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const IPV4 = new RegExp(`^${IPV4_OCTET}(?:\\.${IPV4_OCTET}){3}$`);
/** RFC 1035 2.3.1: letters, digits and hyphens, starting and ending with a letter or digit. */
const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
/** RFC 3261 25.1: user = 1*( unreserved / escaped / user-unreserved ). */
const SIP_USER = /^(?:[A-Za-z0-9\-_.!~*'()&=+$,;?/]|%[0-9A-Fa-f]{2})+$/;

function hostProblem(host: string): string | null {
  if (/^[\d.]+$/.test(host)) {
    return IPV4.test(host) ? null : `${host} is not an IPv4 address (four numbers 0-255)`;
  }
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  const labels = name.split('.');
  if (labels.length < 2) return `${host} is not fully qualified (it needs a domain)`;
  if (name.length > 253) return 'an FQDN has at most 253 characters';
  const bad = labels.find((label) => !LABEL.test(label));
  if (bad !== undefined) {
    return `FQDN label "${bad}" is not 1 to 63 letters, digits or hyphens without a leading or trailing hyphen`;
  }
  if (/^\d+$/.test(labels[labels.length - 1]!))
    return 'the last label of an FQDN cannot be numeric';
  return null;
}

function hostPortProblem(text: string): string | null {
  const match = /^([^:]+)(?::(\d+))?$/.exec(text);
  if (!match) return `${text} is not <host> or <host>:<port>`;
  const [, host, port] = match;
  if (port !== undefined && (!/^[1-9]\d{0,4}$/.test(port) || Number(port) > 65535)) {
    return `port ${port} is not from 1 to 65535`;
  }
  return hostProblem(host!);
}

/**
 * Checks a destination against the formats the service accepts; returns what is wrong with it,
 * or null when it is acceptable.
 */
export function originationUriProblem(uri: string): string | null {
  if (/^sips?:/i.test(uri)) {
    const sip = /^sip:([^@]+)@(.+)$/i.exec(uri);
    if (!sip) return 'a SIP URI must be sip:<user>@<host>';
    if (!SIP_USER.test(sip[1]!)) return `"${sip[1]}" is not a valid SIP user part`;
    return hostPortProblem(sip[2]!);
  }
  return hostPortProblem(uri);
}
