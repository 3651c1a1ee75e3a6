# chatwire: `make run` and `make test` are all a fresh Debian 12 machine needs.
BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc)
CMAKE_GEN  := -G Ninja
space := $(subst ,, )
# Debian's interpreter, the one the Python module is built for (PATH may hold another python3).
PYTHON     := /usr/bin/python3

.PHONY: all bootstrap fetch-tokenizers configure build python python-install run test test-release test-python test-serve serve-test-deps test-sanitize test-fuzz bench bench-python bench-serve fuzz format clean

all: build

bootstrap:
	@scripts/bootstrap

# The tokenizer files too large to commit (npm), checked against data/tokenizers/fetched.sha256.
# The tests need every one of them: a missing file is a failure, not a skip.
fetch-tokenizers: bootstrap
	@scripts/fetch-tokenizers

configure: bootstrap
	@cmake -S . -B $(BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Release >/dev/null

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# The Python module alone: build/python/chatwire (PYTHONPATH=build/python; README "Python").
python: configure
	cmake --build $(BUILD) -j $(JOBS) --target chatwire_python

# The main job: the survey of every bundled template.
run: build
	./$(BUILD)/chatwire survey data/templates

# Installs the module into a virtual environment: make python-install VENV=path (README "Python").
python-install: python
	@test -n "$(VENV)" || { echo "make python-install VENV=path/to/venv" >&2; exit 2; }
	@test -x "$(VENV)/bin/python" || $(PYTHON) -m venv --system-site-packages $(VENV)
	scripts/install-python $(VENV) $(BUILD)

# The whole test suite: Release build (ctest, then the Python module's pytest suite with the
# Dask run); the engine, parsers and tokenizer again under ASan+UBSan; then every fuzz target
# briefly on its committed corpus.
test: test-release test-sanitize test-fuzz

# The test tree is built without profile feedback: the profile changes speed, not behaviour, and
# skipping its training build keeps `make test` within its time budget (make build / make bench
# keep it).
TEST_BUILD ?= build-test
test-release: bootstrap fetch-tokenizers
	@cmake -S . -B $(TEST_BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Release -DCHATWIRE_PGO=OFF >/dev/null
	cmake --build $(TEST_BUILD) -j $(JOBS)
	ctest --test-dir $(TEST_BUILD) --output-on-failure -j $(JOBS)
	$(MAKE) --no-print-directory test-python BUILD=$(TEST_BUILD)
	$(MAKE) --no-print-directory test-serve BUILD=$(TEST_BUILD)

# The test clients of chatwire serve (npm: openai@6, tokenizers@0.23.2), installed exactly as
# tests/serve/package-lock.json pins them; reinstalled when the lock changes.
SERVE_NODE_MODULES := tests/serve/node_modules/.package-lock.json
$(SERVE_NODE_MODULES): tests/serve/package.json tests/serve/package-lock.json
	cd tests/serve && npm ci --no-audit --no-fund --loglevel=error
	@touch $@
serve-test-deps: bootstrap fetch-tokenizers $(SERVE_NODE_MODULES)

# chatwire serve end to end (docs/serve-tests.md): the scripted backend and `$(BUILD)/chatwire serve`
# on 127.0.0.1 with free ports, the official OpenAI client as the client; both files start and
# stop their own processes.
# One file at a time (each holds its own servers); every file runs even when one fails.
SERVE_TESTS := backend sdk faults
test-serve: serve-test-deps
	@test -x $(BUILD)/chatwire || { echo "test-serve: build $(BUILD)/chatwire first" >&2; exit 1; }
	@rc=0; for t in $(SERVE_TESTS); do \
	  echo "node --test tests/serve/e2e/$$t.test.mjs"; \
	  CHATWIRE=$(BUILD)/chatwire node --test tests/serve/e2e/$$t.test.mjs || rc=1; \
	done; exit $$rc

# -p no:cacheprovider: no .pytest_cache in the source tree.
test-python: python
	PYTHONPATH=$(BUILD)/python $(PYTHON) -m pytest -p no:cacheprovider -q tests/python

# The Jinja engine (value + jinja), the chat layer, the output parsers, the tokenizer (it parses
# untrusted tokenizer.json files by hand) and the Endpoint (untrusted requests and model output)
# under ASan+UBSan, built by clang. One build holds both the sanitized suites and the libFuzzer
# targets (test-fuzz), so the components are compiled once for both (the GCC build and the
# separate fuzz build had been over half of a 33-minute make test); clang also compiles
# instrumented code 1.3-1.5 times faster than GCC 12 (src/readback/derive.cpp: 22 s of CPU
# against 34 s at -O1).
SANITIZED := value jinja chat parse readback response tokenize endpoint serve cli
# At -O0 (the gateway, Endpoint, CLI, probe and adapter compile in half the time or less) but for
# the components whose loops the suites run thousands of times, at -O1: unoptimised, the readback
# suite alone took 190 s.
SANITIZE_O1 := value jinja chat parse readback tokenize
ASAN_CONFIGURE = cmake -S . -B $(ASAN_BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCHATWIRE_SANITIZE=ON -DCHATWIRE_FUZZ=ON \
	  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O0 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O0 -g1 -DNDEBUG" \
	  -DCHATWIRE_BENCH=OFF "-DCHATWIRE_TEST_COMPONENTS=$(subst $(space),;,$(SANITIZED))" \
	  "-DCHATWIRE_O1_COMPONENTS=$(subst $(space),;,$(SANITIZE_O1))" >/dev/null
test-sanitize: bootstrap fetch-tokenizers
	@$(ASAN_CONFIGURE)
	cmake --build $(ASAN_BUILD) -j $(JOBS) --target chatwire_cli $(addprefix --target test_,$(SANITIZED)) \
	  $(if $(filter endpoint,$(SANITIZED)),--target test_endpoint_c)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS)

# Every fuzz/*.cpp target for FUZZ_SECONDS (clang + libFuzzer, ASan+UBSan) from fuzz/corpus/, built
# in the sanitizer build; a crash, leak, hang or failed check fails the run.
FUZZ_SECONDS ?= 10
test-fuzz: bootstrap
	@$(ASAN_CONFIGURE)
	CHATWIRE_FUZZ_BUILD=$(ASAN_BUILD) scripts/fuzz $(FUZZ_SECONDS)

bench: build
	scripts/bench

# The gateway under load (bench/serve_load.mjs; not a test): SERVE_CLIENTS concurrent streams
# through chatwire serve and straight to the scripted backend, on 127.0.0.1; docs/serve-tests.md.
SERVE_CLIENTS ?= 1000
bench-serve: configure serve-test-deps
	cmake --build $(BUILD) -j $(JOBS) --target chatwire_cli
	CHATWIRE=$(BUILD)/chatwire node bench/serve_load.mjs --clients $(SERVE_CLIENTS)

# apply_chat_template and encode_batch vs the reference pipeline (bench/python_bench.py).
bench-python: python $(SERVE_NODE_MODULES)
	PYTHONPATH=$(BUILD)/python $(PYTHON) bench/python_bench.py

fuzz: bootstrap
	scripts/fuzz

format:
	clang-format -i $$(git ls-files '*.cpp' '*.hpp')

clean:
	rm -rf $(BUILD) $(TEST_BUILD) $(ASAN_BUILD) build-fuzz
