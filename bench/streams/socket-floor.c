// The socket work of a bidirectional stream and nothing else: what any gateway built on kernel
// sockets pays per stream on this machine, whatever its language. Two roles, run as two
// processes so that each one's CPU is its own:
//
//   socket-floor relay N
//       N UDP sockets and a TCP listener on 127.0.0.1; prints "ready <tcp port> <udp port>..."
//       and then, per stream, forwards what the caller sends: a datagram read (recvmmsg per
//       ready socket, as the gateway's datagram reader does) becomes one write of a media
//       message on the stream's TCP connection, and each reply message read from it becomes
//       one datagram back to the caller (sendto). No parsing, no codec, no framing work.
//   socket-floor peers SECONDS TCP_PORT UDP_PORT...
//       the callers and the server: a 20 ms clock sends one 172-byte RTP-sized datagram to each
//       UDP port; one TCP connection per stream answers each media message with a reply.
//       Prints "sent <datagrams> received <datagrams>" when done.
//
// Sizes are those of a mu-law stream: 172-byte RTP packets, a ~330-byte media event and a
// ~300-byte playAudio message as WebSocket text frames.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { RTP_BYTES = 172, MEDIA_BYTES = 330, REPLY_BYTES = 300, BURST = 16, EVENTS = 256 };

static void die(const char *what) {
  perror(what);
  exit(1);
}

static struct sockaddr_in loopback(uint16_t port) {
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

static uint16_t bound_port(int fd) {
  struct sockaddr_in addr;
  socklen_t len = sizeof addr;
  if (getsockname(fd, (struct sockaddr *)&addr, &len) != 0) die("getsockname");
  return ntohs(addr.sin_port);
}

static int udp_socket(void) {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
  if (fd < 0) die("socket");
  struct sockaddr_in addr = loopback(0);
  if (bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0) die("bind");
  return fd;
}

static void no_delay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static void watch(int epoll, int fd, uint64_t tag) {
  struct epoll_event event = {.events = EPOLLIN, .data.u64 = tag};
  if (epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) != 0) die("epoll_ctl");
}

// Reads whole messages of `size` bytes from a TCP stream; `*partial` carries a message split
// across reads. Returns how many whole messages were read, or -1 once the peer is gone.
static int read_messages(int fd, int size, int *partial) {
  char buffer[8192];
  ssize_t got = read(fd, buffer, sizeof buffer);
  if (got == 0) return -1;
  if (got < 0) return errno == EAGAIN ? 0 : -1;
  int total = *partial + (int)got;
  *partial = total % size;
  return total / size;
}

static int relay(int streams) {
  int *udp = calloc(streams, sizeof *udp);
  int *tcp = calloc(streams, sizeof *tcp);
  int *partial = calloc(streams, sizeof *partial);
  struct sockaddr_in *caller = calloc(streams, sizeof *caller);
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in addr = loopback(0);
  if (bind(listener, (struct sockaddr *)&addr, sizeof addr) != 0) die("bind");
  if (listen(listener, streams) != 0) die("listen");
  printf("ready %u", bound_port(listener));
  for (int i = 0; i < streams; i++) {
    udp[i] = udp_socket();
    printf(" %u", bound_port(udp[i]));
  }
  printf("\n");
  fflush(stdout);
  // The peers connect in stream order and say which stream each connection is.
  for (int i = 0; i < streams; i++) {
    int fd = accept(listener, NULL, NULL);
    int32_t index;
    if (fd < 0 || read(fd, &index, sizeof index) != sizeof index) die("accept");
    if (index < 0 || index >= streams) die("stream index");
    no_delay(fd);
    tcp[index] = fd;
  }
  int epoll = epoll_create1(0);
  for (int i = 0; i < streams; i++) {
    watch(epoll, udp[i], (uint64_t)i << 1);
    watch(epoll, tcp[i], ((uint64_t)i << 1) | 1);
  }
  static char media[MEDIA_BYTES], rtp[BURST][2048];
  memset(media, 'm', sizeof media);
  int open = streams;
  while (open > 0) {
    struct epoll_event events[EVENTS];
    int ready = epoll_wait(epoll, events, EVENTS, 1000);
    for (int e = 0; e < ready; e++) {
      int i = (int)(events[e].data.u64 >> 1);
      if (events[e].data.u64 & 1) {
        int messages = read_messages(tcp[i], REPLY_BYTES, &partial[i]);
        if (messages < 0) {
          epoll_ctl(epoll, EPOLL_CTL_DEL, tcp[i], NULL);
          open--;
          continue;
        }
        for (int m = 0; m < messages && caller[i].sin_port != 0; m++) {
          sendto(udp[i], rtp[0], RTP_BYTES, 0, (struct sockaddr *)&caller[i], sizeof caller[i]);
        }
        continue;
      }
      struct mmsghdr msgs[BURST];
      struct iovec iovs[BURST];
      struct sockaddr_in from[BURST];
      memset(msgs, 0, sizeof msgs);
      for (int b = 0; b < BURST; b++) {
        iovs[b].iov_base = rtp[b];
        iovs[b].iov_len = sizeof rtp[b];
        msgs[b].msg_hdr.msg_iov = &iovs[b];
        msgs[b].msg_hdr.msg_iovlen = 1;
        msgs[b].msg_hdr.msg_name = &from[b];
        msgs[b].msg_hdr.msg_namelen = sizeof from[b];
      }
      int got = recvmmsg(udp[i], msgs, BURST, MSG_DONTWAIT, NULL);
      for (int b = 0; b < got; b++) {
        caller[i] = from[b];
        if (write(tcp[i], media, MEDIA_BYTES) < 0 && errno != EAGAIN) die("write");
      }
    }
  }
  return 0;
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int peers(double seconds, uint16_t tcp_port, int streams, char **udp_ports) {
  int *udp = calloc(streams, sizeof *udp);
  int *tcp = calloc(streams, sizeof *tcp);
  int *partial = calloc(streams, sizeof *partial);
  struct sockaddr_in *relay_udp = calloc(streams, sizeof *relay_udp);
  int epoll = epoll_create1(0);
  for (int i = 0; i < streams; i++) {
    udp[i] = udp_socket();
    relay_udp[i] = loopback((uint16_t)atoi(udp_ports[i]));
    tcp[i] = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = loopback(tcp_port);
    if (connect(tcp[i], (struct sockaddr *)&addr, sizeof addr) != 0) die("connect");
    int32_t index = i;
    if (write(tcp[i], &index, sizeof index) != sizeof index) die("write");
    no_delay(tcp[i]);
    watch(epoll, udp[i], (uint64_t)i << 1);
    watch(epoll, tcp[i], ((uint64_t)i << 1) | 1);
  }
  static char packet[2048], reply[REPLY_BYTES];
  memset(packet, 0x80, RTP_BYTES);
  memset(reply, 'r', sizeof reply);
  long sent = 0, received = 0;
  const double start = now_ms(), end = start + seconds * 1e3;
  double next = start;
  // After the last frame, a moment more for the replies still in flight.
  while (now_ms() < end + 500) {
    double wait = (next < end ? next : end + 500) - now_ms();
    struct epoll_event events[EVENTS];
    int ready = epoll_wait(epoll, events, EVENTS, wait > 0 ? (int)wait + 1 : 0);
    for (int e = 0; e < ready; e++) {
      int i = (int)(events[e].data.u64 >> 1);
      if (events[e].data.u64 & 1) {
        int messages = read_messages(tcp[i], MEDIA_BYTES, &partial[i]);
        if (messages < 0) epoll_ctl(epoll, EPOLL_CTL_DEL, tcp[i], NULL);
        for (int m = 0; m < messages; m++) {
          if (write(tcp[i], reply, sizeof reply) < 0 && errno != EAGAIN) die("write");
        }
      } else {
        while (recv(udp[i], packet, sizeof packet, MSG_DONTWAIT) > 0) received++;
      }
    }
    if (next < end && now_ms() >= next) {
      for (int i = 0; i < streams; i++) {
        sendto(udp[i], packet, RTP_BYTES, 0, (struct sockaddr *)&relay_udp[i], sizeof relay_udp[i]);
        sent++;
      }
      next += 20;
    }
  }
  for (int i = 0; i < streams; i++) close(tcp[i]);
  printf("sent %ld received %ld\n", sent, received);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "relay") == 0) return relay(atoi(argv[2]));
  if (argc >= 5 && strcmp(argv[1], "peers") == 0) {
    return peers(atof(argv[2]), (uint16_t)atoi(argv[3]), argc - 4, argv + 4);
  }
  fprintf(stderr, "usage: socket-floor relay N | socket-floor peers SECONDS TCP_PORT UDP_PORT...\n");
  return 2;
}
