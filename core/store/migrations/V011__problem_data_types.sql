-- What people read as a problem's dtype. The dtype key (float32, float16, bfloat16) names boards, results and the
-- `dtype` option; an integer problem is stored under float32 yet computes on no float: its label is `uint32` for a
-- finite-field product, `int32` for a sort, `uint8/float8_e4m3/float16` for nvfp4-gemm. The map holds, per key, the
-- label where it differs from the key (problems.catalog.data_types), written when the version is registered. A key
-- it lacks reads as itself, so the rows stored before this column show their keys until the problem is registered
-- again (the bot and `arena` do so at their start).
ALTER TABLE problem_versions ADD COLUMN data_types jsonb NOT NULL DEFAULT '{}'::jsonb
    CHECK (jsonb_typeof(data_types) = 'object');
