#ifndef TROVE_CMICROHTTPD_SHIM_H
#define TROVE_CMICROHTTPD_SHIM_H
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <microhttpd.h>

/* MHD_start_daemon is variadic, which Swift cannot call: the server's one
   configuration, spelled out in C. It listens on 127.0.0.1 only (port 0: any
   free port), with a thread per connection (a server-sent event stream waits
   in its own thread), and calls `completed` when a request ends, however it
   ends, so that its state is freed. A connection idle for `idleTimeout`
   seconds is closed; one that sent a request with the token gets longer
   (trove_mhd_set_timeout). */
static inline struct MHD_Daemon *trove_mhd_start(uint16_t port, MHD_AccessHandlerCallback handler, void *context,
                                                 MHD_RequestCompletedCallback completed, unsigned int connectionLimit,
                                                 unsigned int idleTimeout) {
    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, port, NULL, NULL, handler,
                            context, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&address, MHD_OPTION_NOTIFY_COMPLETED,
                            completed, context, MHD_OPTION_CONNECTION_LIMIT, connectionLimit,
                            MHD_OPTION_CONNECTION_TIMEOUT, idleTimeout, MHD_OPTION_END);
}

/* Sets how long one connection may stay idle (MHD_set_connection_option is variadic). */
static inline void trove_mhd_set_timeout(struct MHD_Connection *connection, unsigned int seconds) {
    MHD_set_connection_option(connection, MHD_CONNECTION_OPTION_TIMEOUT, seconds);
}

/* The port the daemon listens on (the one the system chose for port 0). */
static inline uint16_t trove_mhd_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}
#endif
