/**
 * Local TCP ports for the things tests, `bench/` and `scripts/` start themselves (embedded Postgres,
 * redis-server, the server): one copy, imported as `@sitehealth/server/test/support/Ports` from outside
 * the server package.
 */
import * as Net from "node:net"

/** A port on 127.0.0.1 that nothing listens on right now (the OS picks it; it is closed again at once). */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = Net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as Net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

/** Whether something accepts connections on 127.0.0.1:`port`. */
export const canConnect = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = Net.connect(port, "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })
