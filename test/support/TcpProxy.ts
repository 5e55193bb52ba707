/**
 * A TCP proxy in front of a dependency (PostgreSQL, Redis), for outage tests: `cut()` resets every
 * open connection and refuses new ones, as a stopped server does; `restore()` lets connections
 * through again on the same port. Nothing is stopped for real, so other suites sharing the
 * server are not disturbed.
 */
import { connect, createServer, type Server, type Socket } from "node:net"

export interface TcpProxy {
  readonly port: number
  readonly cut: () => Promise<void>
  readonly restore: () => Promise<void>
  readonly close: () => Promise<void>
}

const listen = (server: Server, port: number) =>
  new Promise<number>((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject)
      const address = server.address()
      resolve(typeof address === "object" && address !== null ? address.port : port)
    })
  })

export const startTcpProxy = async (target: { host: string; port: number }): Promise<TcpProxy> => {
  const sockets = new Set<Socket>()
  const track = (socket: Socket) => {
    sockets.add(socket)
    socket.once("close", () => sockets.delete(socket))
  }
  const makeServer = () =>
    createServer((client) => {
      const upstream = connect(target.port, target.host)
      track(client)
      track(upstream)
      client.pipe(upstream).pipe(client)
      const end = () => {
        client.destroy()
        upstream.destroy()
      }
      client.once("error", end).once("close", end)
      upstream.once("error", end).once("close", end)
    })
  let server = makeServer()
  const port = await listen(server, 0)
  const closeServer = () => new Promise<void>((resolve) => server.close(() => resolve()))
  return {
    port,
    cut: async () => {
      const closing = closeServer()
      for (const socket of sockets) socket.resetAndDestroy()
      await closing
    },
    restore: async () => {
      server = makeServer()
      await listen(server, port)
    },
    close: async () => {
      for (const socket of sockets) socket.destroy()
      if (server.listening) await closeServer()
    }
  }
}
