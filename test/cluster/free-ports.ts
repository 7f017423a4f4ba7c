// Free loopback ports for the control plane. All sockets stay open until every port is picked, so
// one call never returns the same port twice; another process may still grab one before the
// component binds it, which is rare enough on a test machine to accept.
import { createServer, type Server } from 'node:net';

function listenOnFreePort(): Promise<{ server: Server; port: number }> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        reject(new Error('unexpected address from a TCP listener'));
        return;
      }
      resolve({ server, port: address.port });
    });
  });
}

export async function freePorts(count: number): Promise<number[]> {
  const held: Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const { server, port } = await listenOnFreePort();
      held.push(server);
      ports.push(port);
    }
    return ports;
  } finally {
    await Promise.all(held.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}
