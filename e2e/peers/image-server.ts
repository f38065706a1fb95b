// A local HTTP server with one small ISO-like image, for InsertMedia against peers that really
// download the image (sushy-tools). Counts downloads so a test can prove the fetch happened.
import { createServer } from 'node:http';

export interface ImageServer {
  /** URL of the image. */
  url: string;
  /** URL of a path that answers 404. */
  missingUrl: string;
  downloads: () => number;
  close: () => Promise<void>;
}

export async function startImageServer(): Promise<ImageServer> {
  const image = Buffer.alloc(64 * 1024, 0x2a);
  let downloads = 0;
  const server = createServer((req, res) => {
    if (req.url === '/images/maintenance.iso') {
      if (req.method === 'GET') downloads += 1;
      res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': image.length });
      res.end(req.method === 'HEAD' ? undefined : image);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}/images/maintenance.iso`,
    missingUrl: `http://127.0.0.1:${port}/images/missing.iso`,
    downloads: () => downloads,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
