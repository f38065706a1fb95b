// A loopback TCP load balancer in front of webhook replicas, standing in for a Service: each new
// connection goes to the next live backend (round robin); a backend that refuses a connection is
// skipped for a while and the connection is tried on the next one, as endpoints drop an unready pod.
// TLS passes through untouched, so the API server verifies the replicas' own certificate. Killing a
// backend cuts its open connections, as a dying pod does; requests in flight on them fail.
import net from 'node:net';

export interface TcpBalancer {
  port: number;
  /** Backend ports by replica index; undefined: that replica is not serving. */
  setBackend(index: number, port: number | undefined): void;
  backends(): (number | undefined)[];
  /** Connections accepted, and connections that had to skip a refusing backend. */
  stats: { connections: number; failovers: number; refused: number };
  close(): Promise<void>;
}

export interface TcpBalancerOptions {
  /** How long a backend that refused a connection is skipped. */
  quarantineMs?: number;
  /** Where to listen; default 127.0.0.1 on a free port. */
  host?: string;
  port?: number;
}

export async function startTcpBalancer(
  backends: (number | undefined)[],
  options: TcpBalancerOptions = {},
): Promise<TcpBalancer> {
  const quarantineMs = options.quarantineMs ?? 1000;
  const ports = [...backends];
  const downUntil = new Map<number, number>();
  const sockets = new Set<net.Socket>();
  const stats = { connections: 0, failovers: 0, refused: 0 };
  let next = 0;

  const candidates = (): number[] => {
    const live = ports.filter((p): p is number => p !== undefined);
    const now = Date.now();
    const up = live.filter((p) => (downUntil.get(p) ?? 0) <= now);
    // Everything quarantined: try them all anyway rather than refuse outright.
    const pool = up.length > 0 ? up : live;
    const start = next++ % Math.max(1, pool.length);
    return [...pool.slice(start), ...pool.slice(0, start)];
  };

  const track = (s: net.Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  };

  const connect = (client: net.Socket, tries: number[]): void => {
    const port = tries.shift();
    if (port === undefined) {
      stats.refused++;
      client.destroy();
      return;
    }
    const upstream = net.connect(port, '127.0.0.1');
    track(upstream);
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
      client.pipe(upstream).pipe(client);
    });
    upstream.on('error', () => {
      if (!connected) {
        // Nothing was sent yet: mark the backend down and try the next one.
        downUntil.set(port, Date.now() + quarantineMs);
        stats.failovers++;
        upstream.destroy();
        if (!client.destroyed) connect(client, tries);
        return;
      }
      client.destroy();
    });
    upstream.once('close', () => {
      if (connected) client.destroy();
    });
    client.once('close', () => upstream.destroy());
  };

  const server = net.createServer({ pauseOnConnect: true }, (client) => {
    stats.connections++;
    track(client);
    client.on('error', () => client.destroy());
    connect(client, candidates());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve);
  });
  const port = (server.address() as net.AddressInfo).port;

  return {
    port,
    stats,
    setBackend(index, p) {
      ports[index] = p;
      if (p !== undefined) downUntil.delete(p);
    },
    backends: () => [...ports],
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
