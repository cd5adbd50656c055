import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** A file server on loopback that honours `Range: bytes=N-` and can cut a reply short. */
export interface RangeServer {
  url: string;
  /** What the next replies serve and do; tests change it between requests. */
  behaviour: {
    body: Buffer;
    /** Cut the connection after this many bytes of the next reply. */
    breakAfter?: number;
    /** Answer every request with the whole file (200), ignoring Range. */
    ignoreRange?: boolean;
  };
  /** Every request: its path and Range header. */
  requests: { url: string; range?: string }[];
  close(): Promise<void>;
}

/** Serves `body` at every path `serves` accepts (default: any), 404 elsewhere. */
export async function startRangeServer(
  body: Buffer,
  serves: (url: string) => boolean = () => true,
): Promise<RangeServer> {
  const server = createServer((req, res) => {
    const { behaviour } = range;
    range.requests.push({ url: req.url ?? "", range: req.headers.range });
    if (!serves(req.url ?? "")) {
      res.writeHead(404).end("no such file");
      return;
    }
    const asked = /^bytes=(\d+)-$/.exec(req.headers.range ?? "")?.[1];
    const start = asked && !behaviour.ignoreRange ? Number(asked) : 0;
    const file = behaviour.body;
    const slice = file.subarray(start);
    const headers: Record<string, string> = { "content-length": String(slice.length) };
    if (start > 0) headers["content-range"] = `bytes ${start}-${file.length - 1}/${file.length}`;
    res.writeHead(start > 0 ? 206 : 200, headers);
    const cut = behaviour.breakAfter;
    behaviour.breakAfter = undefined;
    if (cut === undefined) {
      res.end(slice);
      return;
    }
    // A fetch body that errors drops the chunks it has queued but not yet handed over, so the cut
    // waits long enough for a busy client to have taken what was sent.
    res.write(slice.subarray(0, cut), () => setTimeout(() => res.socket?.destroy(), 300));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  // The server never keeps the test process alive.
  server.unref();
  const range: RangeServer = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    behaviour: { body },
    requests: [],
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return range;
}
