/** What the SIP stack counts; the gateway turns these into Prometheus series. */
export interface SipMetrics {
  requestReceived(method: string): void;
  requestSent(method: string): void;
  responseReceived(method: string, status: number): void;
  responseSent(method: string, status: number): void;
  retransmissionSent(method: string): void;
  retransmissionReceived(method: string): void;
}

const ignore = (): void => {};

export const NO_METRICS: SipMetrics = {
  requestReceived: ignore,
  requestSent: ignore,
  responseReceived: ignore,
  responseSent: ignore,
  retransmissionSent: ignore,
  retransmissionReceived: ignore,
};
