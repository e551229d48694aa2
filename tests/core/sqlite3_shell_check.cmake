# query_sqlite3_shell: the loadable extension in the sqlite3 shell on the bundled sample (docs/schema.md,
# "Virtual tables"). cmake -DSHELL=... -DEXT=... -DFILE=... -DWORK=... -P sqlite3_shell_check.cmake
if(NOT SHELL OR NOT EXISTS "${SHELL}")
    message(FATAL_ERROR "no sqlite3 shell found: install it (scripts/setup.sh installs the Debian package sqlite3)")
endif()
# sqlite's .load takes the path without the suffix too; give it as built
file(WRITE "${WORK}/sqlite3_shell_check.sql"
".load ${EXT}
SELECT count(*), sum(dur_ns) FROM intervals WHERE kernel_id = 1;
SELECT (SELECT count(*) FROM intervals WHERE kernel_id = 1) = (SELECT sum(count) FROM interval_chunks WHERE kernel_id = 1);
SELECT count(*), sum(latency_ns) FROM loads WHERE kernel_id = 1;
SELECT kind_name, count(*) FROM intervals WHERE kernel_id = 11 AND warp_id = (SELECT min(id) FROM warps WHERE kernel_id = 11) GROUP BY kind_name;
")
execute_process(COMMAND "${SHELL}" -readonly -batch "${FILE}" INPUT_FILE "${WORK}/sqlite3_shell_check.sql"
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("exit code: ${code}\n--- stdout:\n${out}\n--- stderr:\n${err}")
# kernel 1 (the sync rung): 4,210,688 intervals, the same sum of durations as TraceStore::loadKernel
# (query_bench), and 131,072 loads; warp 0 of the pingpong's first CTA is a producer
set(want "^4210688\\|7204181391\n1\n131072\\|272325363\nissue_load\\|[0-9]+\nsetup\\|1\nwait_slot\\|[0-9]+\n$")
if(NOT code EQUAL 0 OR NOT err STREQUAL "" OR NOT out MATCHES "${want}")
    message(FATAL_ERROR "the sqlite3 shell did not give the expected rows")
endif()
