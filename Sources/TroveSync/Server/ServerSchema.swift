import Foundation
import TroveStorage

/// The sync server: tables and functions in the server's PostgreSQL, installed
/// and upgraded by ``install(on:deviceRole:)`` (`trove sync setup`).
///
/// Everything the protocol decides is decided here, in SQL: devices log in
/// as one low-privilege role that may only execute the device functions
/// (`hello`, `define_type`, `push`, `pull`, `current_rows`, `heads`, `new_device`), and each call proves
/// who it is with a device token checked inside the function. Functions run
/// as their owner (`SECURITY DEFINER`) with a fixed `search_path` and quote
/// every name they build statements from.
///
/// Schema `trove_sync` holds the bookkeeping (spaces with their sequence
/// counter and clock, members, devices, per-device high-water marks, the
/// synced types); schema `trove_data` holds one ordinary table per synced
/// type, which a backend may query and change with plain SQL (its writes are
/// stamped like a device's by a trigger).
package enum ServerSchema {
    /// The version ``install(on:deviceRole:)`` brings a server to.
    package static let version = 2

    /// Installs the schema, or upgrades an older one in place; does nothing
    /// when the server is current. Safe to run from two places at once (an
    /// advisory lock orders them). `deviceRole` is the role devices log in
    /// as: it is given `EXECUTE` on the device functions and nothing else,
    /// and a statement timeout (`device_statement_timeout_ms` in
    /// `trove_sync.meta`, 30 s). Returns what could not be done, in words
    /// (a role setting needs `CREATEROLE`).
    @discardableResult
    package static func install(on connection: PostgresConnection, deviceRole: String) throws -> [String] {
        var notes: [String] = []
        try connection.execute("BEGIN")
        do {
            try connection.query("SELECT pg_advisory_xact_lock(7283519004417)")
            let installed = try installedVersion(on: connection)
            if installed > version {
                throw TroveError(
                    .syncServer,
                    "the sync server at \(connection.server) has schema version \(installed); this Trove knows up to \(version): update Trove"
                )
            }
            if installed < 1 { try connection.execute(versionOne) }
            for script in [identityFunctions, typeFunctions, changeFunctions] { try connection.execute(script) }
            try connection.query(
                "INSERT INTO trove_sync.meta (key, value) VALUES ('schema_version', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                [String(version)])
            try grant(to: deviceRole, on: connection)
            if let note = try limit(deviceRole, on: connection) { notes.append(note) }
            try connection.execute("COMMIT")
            return notes
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// The schema version installed on the server; 0 when there is none.
    package static func installedVersion(on connection: PostgresConnection) throws -> Int {
        guard try connection.query("SELECT to_regclass('trove_sync.meta') IS NOT NULL") == [["t"]] else { return 0 }
        return try connection.query("SELECT value FROM trove_sync.meta WHERE key = 'schema_version'")
            .first?.first.flatMap { $0 }.flatMap(Int.init) ?? 0
    }

    /// Makes `principal` a member of `space` and returns a new device's token.
    package static func grantDevice(principal: String, space: String, readOnly: Bool, on connection: PostgresConnection) throws
        -> String
    {
        guard
            let token = try connection.query(
                "SELECT trove_sync.grant_device($1, $2, $3)", [principal, space, readOnly ? "true" : "false"]
            ).first?.first ?? nil
        else { throw TroveError(.syncServer, "the sync server at \(connection.server) gave no token") }
        return token
    }

    /// Refuses a device's token from now on; false when there is no such device.
    package static func revokeDevice(_ device: String, on connection: PostgresConnection) throws -> Bool {
        guard UUID(uuidString: device) != nil else {
            throw TroveError(.syncServer, "\(device) is not a device id (a UUID, the part of a token before the dot)")
        }
        return try connection.query("SELECT trove_sync.revoke_device($1::uuid)", [device]) == [["t"]]
    }

    /// Gives the devices' role a statement timeout and an idle-in-transaction
    /// timeout, so no device call runs or holds locks for long (a device's
    /// session could lift them for itself, but its calls are bounded by the
    /// batch and page limits too). A note when the owner may not set them.
    private static func limit(_ role: String, on connection: PostgresConnection) throws -> String? {
        try connection.execute(
            "INSERT INTO trove_sync.meta (key, value) VALUES ('device_statement_timeout_ms', '30000') ON CONFLICT DO NOTHING")
        let milliseconds = try connection.query("SELECT trove_sync.setting('device_statement_timeout_ms')")[0][0] ?? "30000"
        let quoted = PostgresConnection.identifier(role)
        try connection.execute("SAVEPOINT trove_role_settings")
        do {
            try connection.execute(
                "ALTER ROLE \(quoted) SET statement_timeout = \(Int(milliseconds) ?? 30000); ALTER ROLE \(quoted) SET idle_in_transaction_session_timeout = 60000"
            )
            try connection.execute("RELEASE SAVEPOINT trove_role_settings")
            return nil
        } catch {
            try connection.execute("ROLLBACK TO SAVEPOINT trove_role_settings")
            return
                "the devices' role \(role) has no statement timeout: the owner may not alter it (it needs CREATEROLE); run as a superuser: ALTER ROLE \(quoted) SET statement_timeout = \(milliseconds)"
        }
    }

    private static func grant(to role: String, on connection: PostgresConnection) throws {
        let exists = try connection.query("SELECT 1 FROM pg_roles WHERE rolname = $1", [role])
        guard !exists.isEmpty else {
            throw TroveError(
                .syncServer,
                "the sync server at \(connection.server) has no role \(role) for devices to log in as: create it (CREATE ROLE \(PostgresConnection.identifier(role)) LOGIN PASSWORD '…') or name another"
            )
        }
        let quoted = PostgresConnection.identifier(role)
        try connection.execute(
            """
            GRANT USAGE ON SCHEMA trove_sync TO \(quoted);
            GRANT EXECUTE ON FUNCTION
                trove_sync.hello(text, text), trove_sync.define_type(text, text, text, jsonb),
                trove_sync.push(text, text, jsonb), trove_sync.pull(text, text, bigint, text, text, bigint, integer),
                trove_sync.heads(text, text[]), trove_sync.current_rows(text, text, text, text[]),
                trove_sync.new_device(text, text)
            TO \(quoted);
            """)
    }

    /// Version 1's tables. Every table is the owner's; no one else has any right on them.
    static let versionOne = #"""
        CREATE SCHEMA IF NOT EXISTS trove_sync;
        CREATE SCHEMA IF NOT EXISTS trove_data;
        REVOKE ALL ON SCHEMA trove_sync FROM PUBLIC;
        REVOKE ALL ON SCHEMA trove_data FROM PUBLIC;

        CREATE TABLE trove_sync.meta (key text PRIMARY KEY, value text NOT NULL);
        INSERT INTO trove_sync.meta (key, value) VALUES
            ('clock_bound_ms', '60000'),
            ('max_batch_changes', '5000'),
            ('max_batch_bytes', '16777216'),
            ('max_pull_rows', '5000'),
            ('tombstone_days', '30');

        CREATE TABLE trove_sync.spaces (
            space text PRIMARY KEY CHECK (length(space) BETWEEN 1 AND 200),
            seq bigint NOT NULL DEFAULT 0,
            min_seq bigint NOT NULL DEFAULT 0,
            clock bigint NOT NULL DEFAULT 0,
            epoch bigint NOT NULL DEFAULT (floor(random() * 9007199254740991))::bigint
        );

        CREATE TABLE trove_sync.members (
            space text NOT NULL REFERENCES trove_sync.spaces ON DELETE CASCADE,
            principal text NOT NULL CHECK (length(principal) BETWEEN 1 AND 200),
            read_only boolean NOT NULL,
            PRIMARY KEY (space, principal)
        );

        CREATE TABLE trove_sync.devices (
            device uuid PRIMARY KEY,
            principal text NOT NULL,
            token_hash bytea NOT NULL,
            revoked boolean NOT NULL DEFAULT false,
            -- The device whose token asked for this one (new_device): revoking it revokes this one too.
            parent uuid REFERENCES trove_sync.devices,
            created timestamptz NOT NULL DEFAULT now()
        );

        -- How far each device's changes to each space are applied: its change ids up to `pushed`.
        CREATE TABLE trove_sync.device_spaces (
            device uuid NOT NULL REFERENCES trove_sync.devices ON DELETE CASCADE,
            space text NOT NULL REFERENCES trove_sync.spaces ON DELETE CASCADE,
            pushed bigint NOT NULL DEFAULT 0,
            last_push timestamptz,
            PRIMARY KEY (device, space)
        );

        -- The synced types: the table in trove_data, its primary key property, and each property's kind.
        CREATE TABLE trove_sync.types (
            type_name text PRIMARY KEY,
            primary_key text NOT NULL,
            properties jsonb NOT NULL
        );
        """#

    /// Settings, clocks, tokens and membership. Functions are replaced on
    /// every install (their bodies may change without a schema version).
    /// Kinds of property and their columns: int bigint, bool boolean, float
    /// real, double double precision, string text, data bytea, date
    /// timestamptz, decimal text, objectId text, uuid uuid, link text (the
    /// target's primary key), json jsonb (lists, sets, maps, embedded
    /// objects, mixed values).
    static let identityFunctions = #"""
        CREATE OR REPLACE FUNCTION trove_sync.column_type(kind text) RETURNS text
        LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
            SELECT CASE kind
                WHEN 'int' THEN 'bigint' WHEN 'bool' THEN 'boolean' WHEN 'float' THEN 'real'
                WHEN 'double' THEN 'double precision' WHEN 'string' THEN 'text' WHEN 'data' THEN 'bytea'
                WHEN 'date' THEN 'timestamp with time zone' WHEN 'decimal' THEN 'text' WHEN 'objectId' THEN 'text'
                WHEN 'uuid' THEN 'uuid' WHEN 'link' THEN 'text' WHEN 'json' THEN 'jsonb' END
        $$;

        CREATE OR REPLACE FUNCTION trove_sync.setting(name text) RETURNS bigint
        LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
            SELECT value::bigint FROM trove_sync.meta WHERE key = name
        $$;

        -- The server's hybrid logical clock now: milliseconds since 1970 in the high 48 bits.
        CREATE OR REPLACE FUNCTION trove_sync.wall_clock() RETURNS bigint
        LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
            SELECT ((extract(epoch FROM clock_timestamp()) * 1000)::bigint) << 16
        $$;

        -- A property's clock as stored: the HLC in 16 hex digits, then the device; compared as bytes.
        CREATE OR REPLACE FUNCTION trove_sync.clock_text(hlc bigint, device uuid) RETURNS text
        LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
            SELECT lpad(to_hex(hlc), 16, '0') || ':' || device::text
        $$;

        -- Which device a token is, and its membership in `space`; refuses a bad or revoked token,
        -- a space the principal is not a member of, and a write through a read-only membership.
        CREATE OR REPLACE FUNCTION trove_sync.authenticate(token text, space_name text, writing boolean,
            OUT device uuid, OUT principal text, OUT read_only boolean)
        LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
        DECLARE
            parts text[];
            known trove_sync.devices;
        BEGIN
            parts := string_to_array(token, '.');
            IF token IS NULL OR array_length(parts, 1) IS DISTINCT FROM 2
                OR parts[1] !~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN
                RAISE EXCEPTION 'trove sync: the device token is malformed' USING ERRCODE = '28000';
            END IF;
            SELECT * INTO known FROM trove_sync.devices d WHERE d.device = parts[1]::uuid;
            IF NOT FOUND OR known.revoked OR known.token_hash <> sha256(convert_to(parts[2], 'UTF8')) THEN
                RAISE EXCEPTION 'trove sync: the device token is not valid (unknown, revoked or wrong)' USING ERRCODE = '28000';
            END IF;
            device := known.device;
            principal := known.principal;
            SELECT m.read_only INTO read_only FROM trove_sync.members m
                WHERE m.space = space_name AND m.principal = known.principal;
            IF NOT FOUND THEN
                RAISE EXCEPTION 'trove sync: this device is not a member of space %', quote_literal(space_name)
                    USING ERRCODE = '42501';
            END IF;
            IF writing AND read_only THEN
                RAISE EXCEPTION 'trove sync: this device may only read space %', quote_literal(space_name)
                    USING ERRCODE = '42501';
            END IF;
        END $$;

        -- Admin: makes `principal` a member of `space` (created when new) and gives it a new device;
        -- returns the device's token, which is stored only as its hash.
        CREATE OR REPLACE FUNCTION trove_sync.grant_device(principal_name text, space_name text, only_reading boolean)
        RETURNS text LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
        DECLARE
            id uuid := gen_random_uuid();
            -- gen_random_uuid draws on the server's strong random source: 244 random bits.
            secret text := replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '');
        BEGIN
            INSERT INTO trove_sync.spaces (space) VALUES (space_name) ON CONFLICT DO NOTHING;
            INSERT INTO trove_sync.members (space, principal, read_only) VALUES (space_name, principal_name, only_reading)
                ON CONFLICT (space, principal) DO UPDATE SET read_only = EXCLUDED.read_only;
            INSERT INTO trove_sync.devices (device, principal, token_hash)
                VALUES (id, principal_name, sha256(convert_to(secret, 'UTF8')));
            RETURN id::text || '.' || secret;
        END $$;

        -- A new device for the token's principal, with the same memberships: a file that finds the server ahead
        -- of it (a restored or copied file, whose change ids another copy used) goes on as a device of its own.
        CREATE OR REPLACE FUNCTION trove_sync.new_device(token text, space_name text) RETURNS jsonb
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
        DECLARE
            who record;
            id uuid := gen_random_uuid();
            secret text := replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '');
        BEGIN
            SELECT * INTO who FROM trove_sync.authenticate(token, space_name, false);
            INSERT INTO trove_sync.devices (device, principal, token_hash, parent)
                VALUES (id, who.principal, sha256(convert_to(secret, 'UTF8')), who.device);
            RETURN jsonb_build_object('token', id::text || '.' || secret);
        END $$;

        CREATE OR REPLACE FUNCTION trove_sync.revoke_device(id uuid) RETURNS boolean
        LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
            WITH RECURSIVE lineage(device) AS (
                SELECT device FROM trove_sync.devices WHERE device = id
                UNION SELECT d.device FROM trove_sync.devices d JOIN lineage l ON d.parent = l.device),
            revoked AS (
                UPDATE trove_sync.devices SET revoked = true WHERE device IN (SELECT device FROM lineage) RETURNING device)
            SELECT CASE WHEN count(*) = 0 THEN NULL ELSE true END FROM revoked
        $$;

        -- Who the device is and where the space stands: its epoch, minimum and current sequence, the
        -- server's clock, how far this device's changes are applied, and the synced types.
        CREATE OR REPLACE FUNCTION trove_sync.hello(token text, space_name text) RETURNS jsonb
        LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
        DECLARE
            who record;
            s trove_sync.spaces;
        BEGIN
            SELECT * INTO who FROM trove_sync.authenticate(token, space_name, false);
            SELECT * INTO s FROM trove_sync.spaces WHERE space = space_name;
            RETURN jsonb_build_object(
                'device', who.device, 'principal', who.principal, 'readOnly', who.read_only,
                'epoch', s.epoch::text, 'minSeq', s.min_seq, 'head', s.seq,
                'clock', greatest(s.clock, trove_sync.wall_clock())::text,
                'pushed', coalesce((SELECT pushed FROM trove_sync.device_spaces
                    WHERE device = who.device AND space = space_name), 0),
                'schemaVersion', (SELECT value::int FROM trove_sync.meta WHERE key = 'schema_version'),
                'types', coalesce((SELECT jsonb_object_agg(type_name,
                    jsonb_build_object('primaryKey', primary_key, 'properties', properties)) FROM trove_sync.types), '{}'));
        END $$;
        """#
}
