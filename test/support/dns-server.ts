import { createSocket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import * as packet from 'dns-packet';

/** Records served for one name, by type. */
export interface ZoneEntry {
  A?: string[];
  AAAA?: string[];
  SRV?: { priority: number; weight: number; port: number; target: string }[];
  NAPTR?: {
    order: number;
    preference: number;
    flags: string;
    services: string;
    regexp: string;
    replacement: string;
  }[];
}

/**
 * An authoritative DNS responder on a loopback UDP port for the names of `zone` (NXDOMAIN for
 * the others): what a SIP server locator queries, served as a real DNS server would.
 * `queries` lists every question asked ("NAPTR pbx.test", ...).
 */
export async function startDnsServer(zone: Record<string, ZoneEntry>) {
  const socket = createSocket('udp4');
  const queries: string[] = [];
  socket.on('message', (message, rinfo) => {
    const query = packet.decode(message);
    const question = query.questions?.[0];
    if (!question) return;
    queries.push(`${question.type} ${question.name}`);
    const entry = zone[question.name.toLowerCase()];
    const answers: packet.Answer[] = [];
    const type = question.type as keyof ZoneEntry;
    for (const data of entry?.[type] ?? []) {
      answers.push({ type, name: question.name, ttl: 60, data } as packet.Answer);
    }
    const response = packet.encode({
      type: 'response',
      id: query.id,
      flags: packet.AUTHORITATIVE_ANSWER | (entry ? 0 : 3), // rcode 3: NXDOMAIN
      questions: [question],
      answers,
    });
    socket.send(response, rinfo.port, rinfo.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address() as AddressInfo;
  return {
    server: `127.0.0.1:${port}`,
    /** The zone served: names may be added while it runs. */
    zone,
    queries,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
