// Run a Handler on node:http until a signal, then shut down gracefully.

import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

import type { Handler } from "./handler.js";

/** Options of serve. */
export interface ServeOptions {
  /** How long in-flight reconciles may run on after the stop; default 8000 ms. */
  graceMs?: number;
  /** The signals that stop the server; default SIGTERM and SIGINT. */
  signals?: readonly NodeJS.Signals[];
  /** Stops the server too when it aborts (for tests and embedding). */
  signal?: AbortSignal;
  /** Called once the server listens, with its address ("127.0.0.1:8088"). */
  onListening?: (addr: string) => void;
}

/** host and port of an address: ":8088" (every interface), "127.0.0.1:0", "[::1]:8088". */
export function splitAddr(addr: string): { host: string | undefined; port: number } {
  const i = addr.lastIndexOf(":");
  if (i < 0) {
    throw new Error(`listen address ${JSON.stringify(addr)}: not host:port`);
  }
  const host = i > 0 ? addr.slice(0, i).replace(/^\[(.*)\]$/, "$1") : undefined;
  const port = Number(addr.slice(i + 1));
  if (!Number.isInteger(port) || port < 0 || port > 65535 || addr.slice(i + 1) === "") {
    throw new Error(`listen address ${JSON.stringify(addr)}: not host:port`);
  }
  return { host, port };
}

/**
 * Serves handler on addr (default ":8088") until one of opts.signals (SIGTERM, SIGINT) or
 * opts.signal: then it stops accepting, lets in-flight reconciles finish for up to graceMs,
 * aborts the ones left, and resolves once every connection is closed.
 */
export function serve(handler: Handler, addr = ":8088", opts: ServeOptions = {}): Promise<void> {
  const { host, port } = splitAddr(addr);
  const graceMs = opts.graceMs ?? 8000;
  const signals = opts.signals ?? ["SIGTERM", "SIGINT"];
  const inFlight = new Set<AbortController>();
  let stopping = false;

  const server = createServer((req, res) => {
    const ac = new AbortController();
    inFlight.add(ac);
    const done = (): void => {
      if (!inFlight.delete(ac)) {
        return;
      }
      if (!res.writableFinished) {
        ac.abort();
      }
      if (stopping) {
        server.closeIdleConnections(); // this request's keep-alive connection would hold close
      }
    };
    res.on("finish", done);
    res.on("close", done);
    if (stopping) {
      res.setHeader("Connection", "close");
    }
    handler.serveHTTP(req, res, ac.signal).catch(() => res.destroy());
  });

  return new Promise<void>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const stop = (): void => {
      if (stopping) {
        return;
      }
      stopping = true;
      server.close(() => {
        clearTimeout(timer);
        for (const s of signals) {
          process.off(s, stop);
        }
        opts.signal?.removeEventListener("abort", stop);
        resolve();
      });
      server.closeIdleConnections();
      timer = setTimeout(() => {
        for (const ac of inFlight) {
          ac.abort();
        }
        server.closeAllConnections();
      }, graceMs);
      timer.unref();
    };
    for (const s of signals) {
      process.on(s, stop);
    }
    if (opts.signal?.aborted) {
      stop();
    }
    opts.signal?.addEventListener("abort", stop);
    server.once("error", (e) => {
      for (const s of signals) {
        process.off(s, stop);
      }
      reject(e);
    });
    server.listen(port, host, () => {
      const a = server.address() as AddressInfo;
      opts.onListening?.(a.family === "IPv6" ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`);
    });
  });
}
