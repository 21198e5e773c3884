import type { Config } from './config.js';

/** A SIP transport the gateway listens with. */
export type SipTransport = 'udp' | 'tcp' | 'tls' | 'ws' | 'wss';

/** A socket the gateway listens on, and the settings that place it. */
export interface Listener {
  name: 'http' | 'sip-udp' | 'sip-tcp' | 'sip-ws' | 'sip-wss' | 'sip-tls';
  protocol: 'tcp' | 'udp';
  /** What is spoken on it: HTTP, or SIP over a transport. */
  speaks: 'http' | SipTransport;
  host: string;
  port: number;
  portSetting: string;
  hostSetting: string;
}

/**
 * The listeners `listen()` opens for this configuration, each with the settings that place it:
 * what the doctor checks, and what a port clash at start names.
 */
export function gatewayListeners(config: Config): Listener[] {
  const sip = (
    name: Listener['name'],
    protocol: 'tcp' | 'udp',
    speaks: SipTransport,
    port: number,
    portSetting: string,
  ): Listener => ({
    name,
    protocol,
    speaks,
    host: config.sipHost,
    port,
    portSetting,
    hostSetting: 'VOXGATE_SIP_HOST',
  });
  const secure = config.sipTls !== null;
  return [
    {
      name: 'http',
      protocol: 'tcp',
      speaks: 'http',
      host: config.httpHost,
      port: config.httpPort,
      portSetting: 'VOXGATE_HTTP_PORT',
      hostSetting: 'VOXGATE_HTTP_HOST',
    },
    sip('sip-udp', 'udp', 'udp', config.sipPort, 'VOXGATE_SIP_PORT'),
    sip('sip-tcp', 'tcp', 'tcp', config.sipPort, 'VOXGATE_SIP_PORT'),
    sip(
      secure ? 'sip-wss' : 'sip-ws',
      'tcp',
      secure ? 'wss' : 'ws',
      config.sipWsPort,
      'VOXGATE_SIP_WS_PORT',
    ),
    ...(config.sipTls
      ? [sip('sip-tls', 'tcp', 'tls', config.sipTls.port, 'VOXGATE_SIP_TLS_PORT')]
      : []),
  ];
}
