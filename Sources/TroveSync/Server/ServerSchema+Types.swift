extension ServerSchema {
    /// The synced types' tables and the trigger that stamps a backend's writes.
    ///
    /// A type's table `trove_data."Type"` has the space, the primary key
    /// property, `trove_cl` (causal length: odd alive, even deleted),
    /// `trove_seq` (the space sequence of its last change), `trove_changed`,
    /// `trove_extra` (properties the server has no column for, each
    /// `[value, clock]`), and per property a column and its clock
    /// `"name:clock"` (16 hex digits of hybrid logical clock, `:`, the device).
    static let typeFunctions = #"""
        -- The column type of a kind: a value's, or jsonb for a list, set or map (`list:int`, `set:link`, `map:string`…).
        CREATE OR REPLACE FUNCTION trove_sync.column_type(kind text) RETURNS text
        LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
            SELECT CASE
                WHEN kind ~ '^(list|set|map):(int|bool|float|double|string|data|date|decimal|objectId|uuid|link)$' OR kind IN ('embedded', 'list:embedded', 'mixed')
                    THEN 'jsonb'
                ELSE CASE kind
                    WHEN 'int' THEN 'bigint' WHEN 'bool' THEN 'boolean' WHEN 'float' THEN 'real'
                    WHEN 'double' THEN 'double precision' WHEN 'string' THEN 'text' WHEN 'data' THEN 'bytea'
                    WHEN 'date' THEN 'timestamp with time zone' WHEN 'decimal' THEN 'text' WHEN 'objectId' THEN 'text'
                    WHEN 'uuid' THEN 'uuid' WHEN 'link' THEN 'text' WHEN 'json' THEN 'jsonb' END
                END
        $$;

        -- A set or map merges per member or key: its clock column holds its state, {key: [clock, alive, text]}.
        CREATE OR REPLACE FUNCTION trove_sync.is_keyed(kind text) RETURNS boolean
        LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
            SELECT kind LIKE 'set:%' OR kind LIKE 'map:%'
        $$;

        -- The column value of a set or map state: a set's live members as a JSON array, a map's live entries as an object.
        CREATE OR REPLACE FUNCTION trove_sync.keyed_value(kind text, state jsonb) RETURNS jsonb
        LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
            SELECT CASE WHEN kind LIKE 'set:%' THEN
                (SELECT coalesce(jsonb_agg(to_jsonb(e.k) ORDER BY e.k COLLATE "C"), '[]') FROM jsonb_each(state) e(k, v)
                    WHERE (e.v->>1)::boolean)
            ELSE
                (SELECT coalesce(jsonb_object_agg(e.k, e.v->2), '{}') FROM jsonb_each(state) e(k, v) WHERE (e.v->>1)::boolean)
            END
        $$;

        -- A backend's new value of a set or map as a state: members and keys it added or changed, and those it
        -- removed, stamped with the server's clock; the others keep theirs.
        CREATE OR REPLACE FUNCTION trove_sync.keyed_stamp(kind text, old_state jsonb, new_value jsonb, clock text) RETURNS jsonb
        LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
        DECLARE
            wanted jsonb := '{}';
            state jsonb := coalesce(old_state, '{}');
            k text;
            v jsonb;
        BEGIN
            IF kind LIKE 'set:%' THEN
                IF jsonb_typeof(new_value) = 'array' THEN
                    SELECT coalesce(jsonb_object_agg(e, 'null'::jsonb), '{}') INTO wanted FROM jsonb_array_elements_text(new_value) e;
                END IF;
            ELSIF jsonb_typeof(new_value) = 'object' THEN
                SELECT coalesce(jsonb_object_agg(e.key, CASE WHEN jsonb_typeof(e.value) IN ('null', 'string') THEN e.value
                    ELSE to_jsonb(e.value #>> '{}') END), '{}') INTO wanted FROM jsonb_each(new_value) e;
            END IF;
            FOR k, v IN SELECT * FROM jsonb_each(wanted) LOOP
                IF state->k IS NULL OR NOT (state->k->>1)::boolean OR (state->k->2) IS DISTINCT FROM v THEN
                    state := state || jsonb_build_object(k, jsonb_build_array(clock, true, v));
                END IF;
            END LOOP;
            FOR k IN SELECT key FROM jsonb_each(state) WHERE (value->>1)::boolean AND NOT wanted ? key LOOP
                state := state || jsonb_build_object(k, jsonb_build_array(clock, false, NULL));
            END LOOP;
            RETURN state;
        END $$;

        -- Defines or extends a synced type from a device's model: {"primaryKey": name, "properties": {name: kind}}.
        -- Adding properties needs no coordination; a property of another kind, or another primary key, is refused.
        CREATE OR REPLACE FUNCTION trove_sync.define_type(token text, space_name text, type_name text, definition jsonb)
        RETURNS jsonb LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
        DECLARE
            who record;
            existing trove_sync.types;
            pk text := definition->>'primaryKey';
            props jsonb := definition->'properties';
            prop text;
            kind text;
            known text;
            added jsonb := '{}';
        BEGIN
            SELECT * INTO who FROM trove_sync.authenticate(token, space_name, true);
            IF type_name IS NULL OR octet_length(type_name) NOT BETWEEN 1 AND 63 OR type_name ~ '[[:cntrl:]:]'
                OR type_name LIKE 'trove\_%' THEN
                RAISE EXCEPTION 'trove sync: % cannot be the name of a synced type (1 to 63 bytes, no control characters or colons, not starting with trove_)',
                    quote_literal(coalesce(type_name, 'NULL')) USING ERRCODE = '22023';
            END IF;
            IF jsonb_typeof(props) IS DISTINCT FROM 'object' OR pk IS NULL OR NOT props ? pk THEN
                RAISE EXCEPTION 'trove sync: the definition of % needs "primaryKey" and "properties" that include it', quote_ident(type_name)
                    USING ERRCODE = '22023';
            END IF;
            IF props->>pk NOT IN ('string', 'uuid', 'objectId') THEN
                RAISE EXCEPTION 'trove sync: %.% is the primary key of a synced type: it must be a String, UUID or ObjectId, not %',
                    quote_ident(type_name), quote_ident(pk), props->>pk USING ERRCODE = '22023';
            END IF;
            IF (SELECT count(*) FROM jsonb_object_keys(props)) > 700 THEN
                RAISE EXCEPTION 'trove sync: % has more than 700 properties', quote_ident(type_name) USING ERRCODE = '54011';
            END IF;
            FOR prop, kind IN SELECT * FROM jsonb_each_text(props) LOOP
                IF octet_length(prop) NOT BETWEEN 1 AND 57 OR prop ~ '[[:cntrl:]:]' OR prop LIKE 'trove\_%' THEN
                    RAISE EXCEPTION 'trove sync: %.% cannot be synced: a property name has 1 to 57 bytes, no control characters or colons, and does not start with trove_',
                        quote_ident(type_name), quote_literal(prop) USING ERRCODE = '22023';
                END IF;
                IF trove_sync.column_type(kind) IS NULL THEN
                    RAISE EXCEPTION 'trove sync: %.% has kind %, which is not one the server stores', quote_ident(type_name),
                        quote_ident(prop), quote_literal(kind) USING ERRCODE = '22023';
                END IF;
            END LOOP;
            -- One definition at a time: two devices adding the same property must not both add the column.
            PERFORM pg_advisory_xact_lock(7283519004418);
            SELECT * INTO existing FROM trove_sync.types t WHERE t.type_name = define_type.type_name;
            IF NOT FOUND THEN
                IF (SELECT count(*) FROM trove_sync.types) >= 1000 THEN
                    RAISE EXCEPTION 'trove sync: the server already syncs 1000 types' USING ERRCODE = '54000';
                END IF;
                EXECUTE format(
                    'CREATE TABLE trove_data.%I (trove_space text NOT NULL, %I %s NOT NULL, trove_cl bigint NOT NULL DEFAULT 1, '
                    'trove_seq bigint NOT NULL DEFAULT 0, trove_changed timestamptz NOT NULL DEFAULT now(), '
                    'trove_extra jsonb NOT NULL DEFAULT ''{}'', PRIMARY KEY (trove_space, %I))',
                    type_name, pk, trove_sync.column_type(props->>pk), pk);
                EXECUTE format('CREATE INDEX %I ON trove_data.%I (trove_space, trove_seq)', 'trove_seq_' || md5(type_name), type_name);
                EXECUTE format('CREATE TRIGGER trove_stamp BEFORE INSERT OR UPDATE OR DELETE ON trove_data.%I '
                    'FOR EACH ROW EXECUTE FUNCTION trove_sync.stamp_backend_write()', type_name);
                INSERT INTO trove_sync.types (type_name, primary_key, properties)
                    VALUES (define_type.type_name, pk, jsonb_build_object(pk, props->>pk));
                existing := (define_type.type_name, pk, jsonb_build_object(pk, props->>pk))::trove_sync.types;
            ELSIF existing.primary_key <> pk THEN
                RAISE EXCEPTION 'trove sync: % has primary key % on the server, not %', quote_ident(type_name),
                    quote_ident(existing.primary_key), quote_ident(pk) USING ERRCODE = '22023';
            END IF;
            FOR prop, kind IN SELECT * FROM jsonb_each_text(props) LOOP
                known := existing.properties->>prop;
                IF known IS NULL THEN
                    IF (SELECT count(*) FROM jsonb_object_keys(existing.properties || added)) >= 700 THEN
                        RAISE EXCEPTION 'trove sync: % would have more than 700 properties', quote_ident(type_name)
                            USING ERRCODE = '54011';
                    END IF;
                    EXECUTE format('ALTER TABLE trove_data.%I ADD COLUMN %I %s, ADD COLUMN %I text COLLATE "C"',
                        type_name, prop, trove_sync.column_type(kind), prop || ':clock');
                    added := added || jsonb_build_object(prop, kind);
                ELSIF known <> kind THEN
                    RAISE EXCEPTION 'trove sync: %.% is % on the server, not %: change the model or migrate the server''s table',
                        quote_ident(type_name), quote_ident(prop), known, kind USING ERRCODE = '22023';
                END IF;
            END LOOP;
            UPDATE trove_sync.types t SET properties = t.properties || added WHERE t.type_name = define_type.type_name;
            RETURN jsonb_build_object('added', added);
        END $$;

        -- Stamps a backend's INSERT, UPDATE or DELETE on a synced table as a device's change: the space's next
        -- sequence, the server's clock on every property written, and a delete kept as a tombstone (even causal
        -- length, properties cleared). The sync functions set trove_sync.applying while they write.
        CREATE OR REPLACE FUNCTION trove_sync.stamp_backend_write() RETURNS trigger
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
        DECLARE
            def trove_sync.types;
            row_space text;
            key_text text;
            stamp record;
            clock text;
            n jsonb;
            o jsonb;
            patch jsonb := '{}';
            cleared text;
            prop text;
            tombstone bigint;
            keyed jsonb;
        BEGIN
            IF current_setting('trove_sync.applying', true) = 'on' THEN
                RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
            END IF;
            SELECT * INTO def FROM trove_sync.types WHERE type_name = TG_TABLE_NAME;
            IF NOT FOUND THEN RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END; END IF;
            IF TG_OP = 'DELETE' THEN
                row_space := OLD.trove_space;
                key_text := to_jsonb(OLD)->>def.primary_key;
            ELSE
                row_space := NEW.trove_space;
                key_text := to_jsonb(NEW)->>def.primary_key;
            END IF;
            INSERT INTO trove_sync.spaces (space) VALUES (row_space) ON CONFLICT DO NOTHING;
            UPDATE trove_sync.spaces s SET seq = s.seq + 1, clock = greatest(s.clock + 1, trove_sync.wall_clock())
                WHERE s.space = row_space RETURNING s.seq, s.clock INTO stamp;
            clock := trove_sync.clock_text(stamp.clock, '00000000-0000-0000-0000-000000000000');
            SELECT string_agg(format('%I = NULL, %I = NULL', p, p || ':clock'), ', ') INTO cleared
                FROM jsonb_object_keys(def.properties) p WHERE p <> def.primary_key;
            IF TG_OP = 'INSERT' THEN
                -- Over a tombstone: the row is created again (a new causal length), not refused as a duplicate.
                EXECUTE format('SELECT trove_cl FROM trove_data.%I WHERE trove_space = $1 AND %I = $2::%s', TG_TABLE_NAME,
                    def.primary_key, trove_sync.column_type(def.properties->>def.primary_key))
                    INTO tombstone USING row_space, key_text;
                IF tombstone IS NOT NULL AND tombstone % 2 = 0 THEN
                    n := to_jsonb(NEW);
                    FOR prop IN SELECT jsonb_object_keys(def.properties) LOOP
                        CONTINUE WHEN prop = def.primary_key;
                        IF trove_sync.is_keyed(def.properties->>prop) THEN
                            patch := patch || jsonb_build_object(prop, trove_sync.keyed_value(def.properties->>prop,
                                trove_sync.keyed_stamp(def.properties->>prop, NULL, n->prop, clock)), prop || ':clock',
                                trove_sync.keyed_stamp(def.properties->>prop, NULL, n->prop, clock)::text);
                        ELSE
                            patch := patch || jsonb_build_object(prop, n->prop, prop || ':clock', CASE WHEN n->prop = 'null' THEN NULL ELSE clock END);
                        END IF;
                    END LOOP;
                    patch := patch || jsonb_build_object('trove_cl', tombstone + 1, 'trove_seq', stamp.seq, 'trove_changed', now());
                    PERFORM set_config('trove_sync.applying', 'on', true);
                    EXECUTE format('UPDATE trove_data.%I t SET %s FROM jsonb_populate_record(NULL::trove_data.%I, $1) r '
                        'WHERE t.trove_space = $2 AND t.%I = $3::%s', TG_TABLE_NAME,
                        (SELECT string_agg(format('%I = r.%I', k, k), ', ') FROM jsonb_object_keys(patch) k),
                        TG_TABLE_NAME, def.primary_key, trove_sync.column_type(def.properties->>def.primary_key))
                        USING patch, row_space, key_text;
                    PERFORM set_config('trove_sync.applying', 'off', true);
                    RETURN NULL;
                END IF;
            END IF;
            IF TG_OP = 'DELETE' THEN
                IF OLD.trove_cl % 2 = 0 THEN RETURN NULL; END IF;
                PERFORM set_config('trove_sync.applying', 'on', true);
                EXECUTE format('UPDATE trove_data.%I SET trove_cl = trove_cl + 1, trove_seq = $1, trove_changed = now()%s '
                    'WHERE trove_space = $2 AND %I = $3::%s', TG_TABLE_NAME, coalesce(', ' || cleared, ''),
                    def.primary_key, trove_sync.column_type(def.properties->>def.primary_key))
                    USING stamp.seq, row_space, key_text;
                PERFORM set_config('trove_sync.applying', 'off', true);
                RETURN NULL;
            END IF;
            n := to_jsonb(NEW);
            o := CASE WHEN TG_OP = 'UPDATE' THEN to_jsonb(OLD) ELSE '{}' END;
            FOR prop IN SELECT jsonb_object_keys(def.properties) LOOP
                CONTINUE WHEN prop = def.primary_key;
                IF TG_OP = 'INSERT' AND n->prop <> 'null' OR TG_OP = 'UPDATE' AND (n->prop) IS DISTINCT FROM (o->prop) THEN
                    IF trove_sync.is_keyed(def.properties->>prop) THEN
                        keyed := trove_sync.keyed_stamp(def.properties->>prop,
                            CASE WHEN TG_OP = 'UPDATE' AND OLD.trove_cl % 2 = 1 THEN (o->>(prop || ':clock'))::jsonb END, n->prop, clock);
                        patch := patch || jsonb_build_object(prop, trove_sync.keyed_value(def.properties->>prop, keyed),
                            prop || ':clock', keyed::text);
                    ELSE
                        patch := patch || jsonb_build_object(prop || ':clock', clock);
                    END IF;
                END IF;
            END LOOP;
            patch := patch || jsonb_build_object('trove_seq', stamp.seq, 'trove_changed', now());
            IF TG_OP = 'INSERT' THEN
                patch := patch || jsonb_build_object('trove_cl', CASE WHEN NEW.trove_cl % 2 = 1 THEN NEW.trove_cl ELSE NEW.trove_cl + 1 END);
            ELSIF OLD.trove_cl % 2 = 0 AND NEW.trove_cl = OLD.trove_cl THEN
                -- Writing to a deleted row creates it again.
                patch := patch || jsonb_build_object('trove_cl', OLD.trove_cl + 1);
            END IF;
            NEW := jsonb_populate_record(NEW, patch);
            RETURN NEW;
        END $$;
        """#
}
