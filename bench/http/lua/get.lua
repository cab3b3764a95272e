-- A plain GET of the URL wrk is given (headers come from -H).
dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")
