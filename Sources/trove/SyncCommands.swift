import Foundation
import Trove
import TroveSync

/// `trove sync …`: set up a PostgreSQL as a sync server and give devices access.
enum SyncCommands {
    static let help = """
        usage: trove sync setup [URL] [--device-role ROLE]
               trove sync grant [URL] --principal P --space S [--read-only]
               trove sync revoke [URL] --device DEVICE-ID

        setup   installs the sync server's tables and functions in the PostgreSQL at URL, or
                upgrades them in place (run it again at will: it changes nothing when current);
                devices log in as ROLE (default trove_device), which may only call the sync functions
        grant   makes principal P a member of space S (created when new; --read-only: pulls only)
                and prints a new device token, once: the server keeps only its hash
        revoke  refuses the device's token from now on

        URL is postgresql://OWNER:PASSWORD@HOST:PORT/DATABASE, the role that owns the sync schema;
        without URL, TROVE_SYNC_URL is read (keeps the password out of the process list)
        example: TROVE_SYNC_URL=postgresql://owner:secret@db.example.com/app trove sync grant --principal min --space diary
        """

    static func run(_ arguments: Arguments) throws {
        guard let action = arguments.positional.first else { throw UsageError("trove sync needs setup, grant or revoke") }
        let rest = Array(arguments.positional.dropFirst())
        switch action {
        case "setup":
            try arguments.allow(options: ["--device-role"])
            let connection = try connect(rest)
            let role = arguments.option("--device-role") ?? "trove_device"
            let before = try ServerSchema.installedVersion(on: connection)
            try ServerSchema.install(on: connection, deviceRole: role)
            let what =
                before == 0
                ? "installed" : before < ServerSchema.version ? "upgraded from version \(before)" : "already current"
            print(
                "sync server at \(connection.server): schema version \(ServerSchema.version) (\(what)); devices log in as \(role)"
            )
        case "grant":
            try arguments.allow(options: ["--principal", "--space"], flags: ["--read-only"])
            guard let principal = arguments.option("--principal"), let space = arguments.option("--space") else {
                throw UsageError("trove sync grant needs --principal and --space")
            }
            let connection = try connect(rest)
            let readOnly = arguments.flags.contains("--read-only")
            let token = try ServerSchema.grantDevice(
                principal: principal, space: space, readOnly: readOnly, on: connection)
            FileHandle.standardError.write(
                Data(
                    "\(principal) is a \(readOnly ? "read-only " : "")member of space \(space); the new device's token (shown once):\n"
                        .utf8))
            print(token)
        case "revoke":
            try arguments.allow(options: ["--device"])
            guard let device = arguments.option("--device") else { throw UsageError("trove sync revoke needs --device") }
            let connection = try connect(rest)
            guard try ServerSchema.revokeDevice(device, on: connection) else {
                throw TroveError(.syncServer, "the sync server at \(connection.server) has no device \(device)")
            }
            print("device \(device) is revoked: its token is refused from now on")
        default:
            throw UsageError("unknown sync command '\(action)'")
        }
    }

    private static func connect(_ positional: [String]) throws -> PostgresConnection {
        guard positional.count <= 1 else { throw UsageError("unexpected argument '\(positional[1])'") }
        guard let url = positional.first ?? ProcessInfo.processInfo.environment["TROVE_SYNC_URL"], !url.isEmpty else {
            throw UsageError("give the server's URL, or set TROVE_SYNC_URL")
        }
        return try PostgresConnection(url: url)
    }
}
