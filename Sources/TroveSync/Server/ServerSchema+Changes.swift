extension ServerSchema {
    /// Push, pull and heads: the merge rules, in SQL.
    ///
    /// A pushed change is one object's: `{"cid": n, "type": T, "id": key,
    /// "cl": causal length, "set": {property: [value, hlc]}}` — values as
    /// PostgreSQL's text input of the column (JSON null for NULL), the
    /// hybrid logical clock as a decimal string. Per property the later
    /// clock (16 hex digits of HLC, then the device id, compared as bytes)
    /// wins; a larger causal length wins over every clock (a delete over
    /// concurrent updates; a re-create starts with no old values); a
    /// smaller one is ignored.
    static let changeFunctions = #"""
        CREATE OR REPLACE FUNCTION trove_sync.push(token text, space_name text, batch jsonb) RETURNS jsonb
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
        SET TimeZone = 'UTC' SET DateStyle = 'ISO, YMD' SET extra_float_digits = 1 SET bytea_output = 'hex' AS $$
        DECLARE
            who record;
            changes jsonb := batch->'changes';
            applied_until bigint;
            stamp record;
            bound bigint;
            ch jsonb;
            cid bigint;
            previous bigint := NULL;
            def trove_sync.types;
            pk_type text;
            cur jsonb;
            cl bigint;
            cur_cl bigint;
            patch jsonb;
            extra jsonb;
            prop text;
            pair jsonb;
            hlc bigint;
            clk text;
            held text;
            newest bigint := 0;
            final_clock bigint;
            rejected jsonb := '[]';
            applied int := 0;
            skipped int := 0;
            state jsonb;
            touched boolean;
            entry_key text;
            entry jsonb;
        BEGIN
            SELECT * INTO who FROM trove_sync.authenticate(token, space_name, true);
            IF jsonb_typeof(changes) IS DISTINCT FROM 'array' THEN
                RAISE EXCEPTION 'trove sync: a push needs {"changes": [...]}' USING ERRCODE = '22023';
            END IF;
            IF jsonb_array_length(changes) > trove_sync.setting('max_batch_changes')
                OR octet_length(batch::text) > trove_sync.setting('max_batch_bytes') THEN
                RAISE EXCEPTION 'trove sync: a batch of % changes (% bytes) is larger than the server takes (% changes, % bytes): send smaller batches',
                    jsonb_array_length(changes), octet_length(batch::text), trove_sync.setting('max_batch_changes'),
                    trove_sync.setting('max_batch_bytes') USING ERRCODE = '54000';
            END IF;
            PERFORM set_config('trove_sync.applying', 'on', true);
            -- The batch's rows are locked first, in one order, then the space's counter row: the order a backend's
            -- write takes them in (its row, then the counter in the trigger), so the two cannot deadlock.
            FOR def IN SELECT t.* FROM trove_sync.types t
                WHERE t.type_name IN (SELECT DISTINCT c->>'type' FROM jsonb_array_elements(changes) c) ORDER BY t.type_name LOOP
                BEGIN
                    EXECUTE format('SELECT count(*) FROM (SELECT 1 FROM trove_data.%I WHERE trove_space = $1 AND %I = ANY($2::%s[]) '
                        'ORDER BY %I FOR UPDATE) locked', def.type_name, def.primary_key,
                        trove_sync.column_type(def.properties->>def.primary_key), def.primary_key)
                        USING space_name, (SELECT array_agg(DISTINCT c->>'id') FROM jsonb_array_elements(changes) c
                            WHERE c->>'type' = def.type_name);
                EXCEPTION WHEN data_exception THEN
                    NULL;  -- a malformed key: that change is refused below, on its own
                END;
            END LOOP;
            INSERT INTO trove_sync.device_spaces (device, space) VALUES (who.device, space_name) ON CONFLICT DO NOTHING;
            SELECT pushed INTO applied_until FROM trove_sync.device_spaces
                WHERE device = who.device AND space = space_name FOR UPDATE;
            -- The space's counter row orders pushes: sequence order is commit order.
            UPDATE trove_sync.spaces s SET seq = s.seq + 1, clock = greatest(s.clock + 1, trove_sync.wall_clock())
                WHERE s.space = space_name RETURNING s.seq, s.clock INTO stamp;
            bound := ((trove_sync.wall_clock() >> 16) + trove_sync.setting('clock_bound_ms')) << 16 | 65535;
            FOR ch IN SELECT * FROM jsonb_array_elements(changes) LOOP
                cid := (ch->>'cid')::bigint;
                IF cid IS NULL OR previous IS NOT NULL AND cid <= previous THEN
                    RAISE EXCEPTION 'trove sync: change ids of a batch must rise (% after %)', cid, previous USING ERRCODE = '22023';
                END IF;
                previous := cid;
                IF cid <= applied_until THEN
                    skipped := skipped + 1;
                    CONTINUE;
                END IF;
                BEGIN
                    SELECT * INTO def FROM trove_sync.types WHERE type_name = ch->>'type';
                    IF NOT FOUND THEN
                        RAISE EXCEPTION 'the server syncs no type %', quote_ident(ch->>'type') USING ERRCODE = '22023';
                    END IF;
                    cl := (ch->>'cl')::bigint;
                    IF cl IS NULL OR cl < 1 OR ch->>'id' IS NULL THEN
                        RAISE EXCEPTION 'a change needs "id" and a causal length of at least 1' USING ERRCODE = '22023';
                    END IF;
                    pk_type := trove_sync.column_type(def.properties->>def.primary_key);
                    EXECUTE format('SELECT to_jsonb(t) FROM trove_data.%I t WHERE trove_space = $1 AND %I = $2::%s FOR UPDATE',
                        def.type_name, def.primary_key, pk_type) INTO cur USING space_name, ch->>'id';
                    cur_cl := coalesce((cur->>'trove_cl')::bigint, 0);
                    CONTINUE WHEN cl < cur_cl;
                    patch := '{}';
                    extra := CASE WHEN cl > cur_cl THEN '{}' ELSE coalesce(cur->'trove_extra', '{}') END;
                    IF cl > cur_cl THEN
                        -- A new life of the object (or its deletion): nothing of the old one stays.
                        SELECT coalesce(jsonb_object_agg(p, NULL) || jsonb_object_agg(p || ':clock', NULL), '{}') INTO patch
                            FROM jsonb_object_keys(def.properties) p WHERE p <> def.primary_key;
                        patch := patch || jsonb_build_object('trove_cl', cl, 'trove_extra', '{}');
                    END IF;
                    IF cl % 2 = 1 AND jsonb_typeof(ch->'set') = 'object' THEN
                        FOR prop, pair IN SELECT * FROM jsonb_each(ch->'set') LOOP
                            IF trove_sync.is_keyed(def.properties->>prop) THEN
                                -- A set or map: per member or key, the later clock wins.
                                IF jsonb_typeof(pair->'e') IS DISTINCT FROM 'object' THEN
                                    RAISE EXCEPTION 'the change of %.% is not {"e": {key: [value, clock, alive]}}',
                                        quote_ident(def.type_name), quote_ident(prop) USING ERRCODE = '22023';
                                END IF;
                                state := CASE WHEN cl > cur_cl THEN '{}'::jsonb
                                    ELSE coalesce((cur->>(prop || ':clock'))::jsonb, '{}') END;
                                touched := false;
                                FOR entry_key, entry IN SELECT * FROM jsonb_each(pair->'e') LOOP
                                    IF jsonb_typeof(entry) IS DISTINCT FROM 'array' OR jsonb_array_length(entry) <> 3
                                        OR jsonb_typeof(entry->2) IS DISTINCT FROM 'boolean'
                                        OR jsonb_typeof(entry->0) NOT IN ('string', 'null') THEN
                                        RAISE EXCEPTION 'an entry of %.% is not [value, clock, alive]', quote_ident(def.type_name),
                                            quote_ident(prop) USING ERRCODE = '22023';
                                    END IF;
                                    hlc := least((entry->>1)::bigint, bound);
                                    newest := greatest(newest, hlc);
                                    clk := trove_sync.clock_text(hlc, who.device);
                                    IF state->entry_key IS NULL OR clk COLLATE "C" > (state->entry_key->>0) COLLATE "C" THEN
                                        state := state || jsonb_build_object(entry_key,
                                            jsonb_build_array(clk, (entry->>2)::boolean, CASE WHEN (entry->>2)::boolean THEN entry->0 END));
                                        touched := true;
                                    END IF;
                                END LOOP;
                                IF touched THEN
                                    patch := patch || jsonb_build_object(prop, trove_sync.keyed_value(def.properties->>prop, state),
                                        prop || ':clock', state::text);
                                END IF;
                                CONTINUE;
                            END IF;
                            IF jsonb_typeof(pair) IS DISTINCT FROM 'array' OR jsonb_array_length(pair) <> 2 THEN
                                RAISE EXCEPTION 'the change of %.% is not [value, clock]', quote_ident(def.type_name),
                                    quote_ident(prop) USING ERRCODE = '22023';
                            END IF;
                            hlc := least((pair->>1)::bigint, bound);
                            newest := greatest(newest, hlc);
                            clk := trove_sync.clock_text(hlc, who.device);
                            IF prop = def.primary_key THEN CONTINUE; END IF;
                            IF def.properties ? prop THEN
                                held := CASE WHEN cl > cur_cl THEN NULL ELSE cur->>(prop || ':clock') END;
                                IF held IS NULL OR clk COLLATE "C" > held COLLATE "C" THEN
                                    -- A list or an embedded object travels as the text of its JSON; its column holds the JSON.
                                    patch := patch || jsonb_build_object(prop, CASE WHEN ((def.properties->>prop) LIKE 'list:%'
                                        OR def.properties->>prop IN ('embedded', 'mixed')) AND jsonb_typeof(pair->0) = 'string'
                                        THEN (pair->>0)::jsonb ELSE pair->0 END,
                                        prop || ':clock', clk);
                                END IF;
                            ELSE
                                -- A property the server has no column for (a newer app): kept, merged the same way.
                                held := extra->prop->>1;
                                IF held IS NULL OR clk COLLATE "C" > held COLLATE "C" THEN
                                    extra := extra || jsonb_build_object(prop, jsonb_build_array(pair->0, clk));
                                    patch := patch || jsonb_build_object('trove_extra', extra);
                                END IF;
                            END IF;
                        END LOOP;
                    END IF;
                    CONTINUE WHEN patch = '{}' AND cur IS NOT NULL;
                    patch := patch || jsonb_build_object('trove_seq', stamp.seq, 'trove_changed', now());
                    IF cur IS NULL THEN
                        patch := patch || jsonb_build_object('trove_space', space_name, def.primary_key, ch->>'id',
                            'trove_cl', cl, 'trove_extra', extra);
                        EXECUTE format('INSERT INTO trove_data.%I SELECT * FROM jsonb_populate_record(NULL::trove_data.%I, $1)',
                            def.type_name, def.type_name) USING patch;
                    ELSE
                        EXECUTE format('UPDATE trove_data.%I t SET %s FROM jsonb_populate_record(NULL::trove_data.%I, $1) r '
                            'WHERE t.trove_space = $2 AND t.%I = $3::%s', def.type_name,
                            (SELECT string_agg(format('%I = r.%I', k, k), ', ') FROM jsonb_object_keys(patch) k),
                            def.type_name, def.primary_key, pk_type) USING patch, space_name, ch->>'id';
                    END IF;
                    applied := applied + 1;
                EXCEPTION WHEN OTHERS THEN
                    -- A passing failure (a deadlock, a serialization failure, a lock or resource limit, the
                    -- server shutting down) is no verdict on the change: the whole push fails and is sent again.
                    IF left(SQLSTATE, 2) IN ('40', '53', '57', '08', '55') THEN
                        RAISE;
                    END IF;
                    -- Refused, and the changes behind it go on: the device undoes this one and tells the app.
                    rejected := rejected || jsonb_build_object('cid', cid, 'type', ch->>'type', 'id', ch->>'id',
                        'state', SQLSTATE, 'reason', SQLERRM);
                END;
            END LOOP;
            IF previous IS NOT NULL AND previous > applied_until THEN
                UPDATE trove_sync.device_spaces SET pushed = previous, last_push = now()
                    WHERE device = who.device AND space = space_name;
            END IF;
            UPDATE trove_sync.spaces s SET clock = greatest(s.clock, newest) WHERE s.space = space_name
                RETURNING s.clock INTO final_clock;
            PERFORM set_config('trove_sync.applying', 'off', true);
            RETURN jsonb_build_object('seq', stamp.seq, 'pushed', greatest(applied_until, coalesce(previous, 0)),
                'clock', final_clock::text, 'applied', applied, 'skipped', skipped, 'rejected', rejected);
        END $$;

        -- The SQL expression of a row of `def` (as `t`) as devices read it: {t, id, seq, cl, v: {property: text},
        -- c: {property: clock}, x: extra}.
        CREATE OR REPLACE FUNCTION trove_sync.row_json(def trove_sync.types) RETURNS text
        LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
            SELECT format('jsonb_build_object(''t'', %L::text, ''id'', t.%I::text, ''seq'', t.trove_seq, ''cl'', t.trove_cl, '
                '''v'', json_object(ARRAY[%s]::text[], ARRAY[%s]::text[]), '
                '''c'', json_object(ARRAY[%s]::text[], ARRAY[%s]::text[]), ''x'', t.trove_extra)',
                def.type_name, def.primary_key,
                coalesce(string_agg(quote_literal(p), ', ' ORDER BY p), ''), coalesce(string_agg(format('t.%I::text', p), ', ' ORDER BY p), ''),
                coalesce(string_agg(quote_literal(p), ', ' ORDER BY p), ''), coalesce(string_agg(format('t.%I', p || ':clock'), ', ' ORDER BY p), ''))
            FROM jsonb_object_keys(def.properties) p WHERE p <> def.primary_key
        $$;

        -- The rows of `space_name` changed after `since` up to `until` (the head when NULL), in
        -- (sequence, type, key) order after the cursor (`after_type`, `after_id` within `since`), at most
        -- `max_rows`. Read in one snapshot (a STABLE function): never half of a push.
        CREATE OR REPLACE FUNCTION trove_sync.pull(token text, space_name text, since bigint, after_type text,
            after_id text, until bigint, max_rows integer)
        RETURNS jsonb LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
        SET TimeZone = 'UTC' SET DateStyle = 'ISO, YMD' SET extra_float_digits = 1 SET bytea_output = 'hex' AS $$
        DECLARE
            who record;
            s trove_sync.spaces;
            head bigint;
            wanted integer;
            parts text[] := '{}';
            def trove_sync.types;
            found_rows jsonb;
        BEGIN
            SELECT * INTO who FROM trove_sync.authenticate(token, space_name, false);
            SELECT * INTO s FROM trove_sync.spaces WHERE space = space_name;
            head := least(coalesce(until, s.seq), s.seq);
            wanted := greatest(1, least(coalesce(max_rows, 1000), trove_sync.setting('max_pull_rows')::integer));
            IF since IS NULL OR since < 0 THEN
                RAISE EXCEPTION 'trove sync: a pull needs the sequence it continues from (0 for everything)' USING ERRCODE = '22023';
            END IF;
            IF since > 0 AND since < s.min_seq THEN
                RETURN jsonb_build_object('reset', true, 'epoch', s.epoch::text, 'minSeq', s.min_seq, 'head', s.seq,
                    'clock', s.clock::text);
            END IF;
            FOR def IN SELECT * FROM trove_sync.types ORDER BY type_name COLLATE "C" LOOP
                -- The page's rows are picked first (by the index on space and sequence, stopping at the limit), and
                -- only they are turned into JSON.
                parts := parts || format(
                    '(SELECT %L::text COLLATE "C" AS type, t.%I::text COLLATE "C" AS id, t.trove_seq AS seq, %s AS r '
                    'FROM (SELECT * FROM trove_data.%I t WHERE t.trove_space = $1 AND t.trove_seq >= $2 AND t.trove_seq <= $3 AND '
                    '(t.trove_seq > $2 OR $4 IS NOT NULL AND '
                    '(%L::text COLLATE "C", t.%I::text COLLATE "C") > ($4 COLLATE "C", $5 COLLATE "C")) '
                    'ORDER BY t.trove_seq, t.%I::text COLLATE "C" LIMIT $6 + 1) t)',
                    def.type_name, def.primary_key, trove_sync.row_json(def), def.type_name, def.type_name,
                    def.primary_key, def.primary_key);
            END LOOP;
            IF array_length(parts, 1) IS NULL THEN
                found_rows := '[]';
            ELSE
                EXECUTE format('SELECT coalesce(jsonb_agg(r ORDER BY seq, type, id), ''[]'') FROM (SELECT * FROM (%s) u '
                    'ORDER BY seq, type, id LIMIT $6 + 1) picked', array_to_string(parts, ' UNION ALL '))
                    INTO found_rows USING space_name, since, head, after_type, coalesce(after_id, ''), wanted;
            END IF;
            RETURN jsonb_build_object('epoch', s.epoch::text, 'minSeq', s.min_seq, 'head', head, 'clock', s.clock::text,
                'more', jsonb_array_length(found_rows) > wanted,
                'rows', CASE WHEN jsonb_array_length(found_rows) > wanted THEN found_rows - wanted ELSE found_rows END);
        END $$;

        -- The rows of `ids` of one type as they are now (the shape pull gives): a device undoes a refused
        -- change by taking them back.
        CREATE OR REPLACE FUNCTION trove_sync.current_rows(token text, space_name text, type_name text, ids text[])
        RETURNS jsonb LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
        SET TimeZone = 'UTC' SET DateStyle = 'ISO, YMD' SET extra_float_digits = 1 SET bytea_output = 'hex' AS $$
        DECLARE
            who record;
            def trove_sync.types;
            found_rows jsonb;
        BEGIN
            SELECT * INTO who FROM trove_sync.authenticate(token, space_name, false);
            IF coalesce(array_length(ids, 1), 0) > 1000 THEN
                RAISE EXCEPTION 'trove sync: at most 1000 objects per call' USING ERRCODE = '54000';
            END IF;
            SELECT * INTO def FROM trove_sync.types t WHERE t.type_name = current_rows.type_name;
            IF NOT FOUND THEN RETURN jsonb_build_object('rows', '[]'::jsonb); END IF;
            EXECUTE format('SELECT coalesce(jsonb_agg(%s), ''[]'') FROM trove_data.%I t '
                'WHERE t.trove_space = $1 AND t.%I::text = ANY($2)', trove_sync.row_json(def), def.type_name, def.primary_key)
                INTO found_rows USING space_name, ids;
            RETURN jsonb_build_object('rows', found_rows);
        END $$;

        -- The current sequence of each of `space_names` the device is a member of: a cheap poll.
        CREATE OR REPLACE FUNCTION trove_sync.heads(token text, space_names text[]) RETURNS jsonb
        LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
        DECLARE
            result jsonb := '{}';
            name text;
        BEGIN
            IF coalesce(array_length(space_names, 1), 0) > 1000 THEN
                RAISE EXCEPTION 'trove sync: at most 1000 spaces per call' USING ERRCODE = '54000';
            END IF;
            FOREACH name IN ARRAY coalesce(space_names, '{}') LOOP
                PERFORM trove_sync.authenticate(token, name, false);
                result := result || jsonb_build_object(name, (SELECT seq FROM trove_sync.spaces WHERE space = name));
            END LOOP;
            RETURN result;
        END $$;

        -- Admin: drops tombstones older than the retention window (tombstone_days) and raises each space's minimum
        -- sequence past them: a device whose cursor is older may have missed a delete, and bootstraps again.
        CREATE OR REPLACE FUNCTION trove_sync.purge_tombstones() RETURNS bigint
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
        DECLARE
            def trove_sync.types;
            purged bigint := 0;
            n bigint;
        BEGIN
            PERFORM set_config('trove_sync.applying', 'on', true);
            FOR def IN SELECT * FROM trove_sync.types LOOP
                EXECUTE format('WITH gone AS (DELETE FROM trove_data.%I WHERE trove_cl %% 2 = 0 AND trove_changed < now() - make_interval(days => $1::integer) '
                    'RETURNING trove_space, trove_seq), raised AS (UPDATE trove_sync.spaces s SET min_seq = greatest(s.min_seq, m.seq) '
                    'FROM (SELECT trove_space, max(trove_seq) AS seq FROM gone GROUP BY trove_space) m WHERE s.space = m.trove_space) '
                    'SELECT count(*) FROM gone', def.type_name) INTO n USING trove_sync.setting('tombstone_days');
                purged := purged + n;
            END LOOP;
            PERFORM set_config('trove_sync.applying', 'off', true);
            RETURN purged;
        END $$;

        -- Admin, after restoring the server from a backup: every space gets a new epoch, so devices that synced
        -- with the lost history bootstrap again (keeping their unsynced changes).
        CREATE OR REPLACE FUNCTION trove_sync.new_epochs() RETURNS bigint
        LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
            WITH changed AS (UPDATE trove_sync.spaces SET epoch = (floor(random() * 9007199254740991))::bigint RETURNING 1)
            SELECT count(*) FROM changed
        $$;

        REVOKE ALL ON ALL FUNCTIONS IN SCHEMA trove_sync FROM PUBLIC;
        """#
}
