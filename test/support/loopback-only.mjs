/**
 * Loaded with `node --import` (through NODE_OPTIONS) into a program under test: any TCP
 * connection (plain or TLS, HTTP or not) or name lookup that is not for this machine's
 * loopback fails at once, and says so on stderr with a line the test looks for. A request
 * that would have left the machine never opens a socket.
 *
 * Plain JavaScript: it runs before any TypeScript loader is registered.
 */
import dns from 'node:dns';
import net from 'node:net';

const REFUSED = 'loopback-only: refused';

const isLoopback = (host) =>
  host === undefined ||
  host === 'localhost' ||
  host === '::1' ||
  /^127\.\d+\.\d+\.\d+$/.test(String(host)) ||
  /^::ffff:127\./.test(String(host));

const refuse = (what) => {
  const error = new Error(`${REFUSED} ${what}`);
  process.stderr.write(`${error.message}\n`);
  return error;
};

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  // net.connect hands the socket its arguments already normalised, as [[options, cb]].
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  const options =
    typeof first === 'object' && first !== null ? first : { port: first, host: args[1] };
  if (options.path === undefined && !isLoopback(options.host))
    throw refuse(`a connection to ${options.host}:${options.port}`);
  return connect.apply(this, args);
};

const lookup = dns.lookup;
dns.lookup = function (hostname, ...rest) {
  if (!isLoopback(hostname)) throw refuse(`a lookup of ${hostname}`);
  return lookup.call(this, hostname, ...rest);
};
const lookupPromise = dns.promises.lookup;
dns.promises.lookup = function (hostname, ...rest) {
  if (!isLoopback(hostname)) return Promise.reject(refuse(`a lookup of ${hostname}`));
  return lookupPromise.call(this, hostname, ...rest);
};
