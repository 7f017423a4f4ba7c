// The certificate a TLS server on 127.0.0.1 presents to a new connection (not verified: the tests
// compare its fingerprint with the one they expect).
import { type PeerCertificate, connect } from 'node:tls';

export function presentedCertificate(port: number): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      resolve(socket.getPeerCertificate());
      socket.end();
    });
    socket.once('error', reject);
  });
}
