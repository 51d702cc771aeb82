# tilegraph — every target installs into a local virtualenv (.venv) when needed.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
PLUGIN_STAMP := $(VENV)/.example-plugin-stamp

.PHONY: install demo test test-all pytest lit bench lint format docs viz-seed clean chromium explorer-screenshot

install: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,dev,plot,distributed]'
	@touch $(STAMP)

# The tutorial's example plugin (docs/tutorial-writing-a-pass.md), installed for `make test`
# to run its lit tests and pytest. Editable: reinstalled only when its entry points change.
$(PLUGIN_STAMP): examples/plugin/pyproject.toml | $(STAMP)
	$(PY) -m pip install --quiet --quiet --no-deps -e examples/plugin
	@touch $(PLUGIN_STAMP)

demo: $(STAMP)
	@echo "== tilegraph-opt: the IR with origin and storage views =="
	$(BIN)/tilegraph-opt examples/conv_block.mlir
	@echo "== the format engine on it (strategy ge): where the TransData go =="
	$(BIN)/tilegraph-opt examples/conv_block.mlir -p 'format{strategy=ge}'
	@echo "== O2: folding and rules, the format engine, then fusion into graph.fused kernels =="
	$(BIN)/tilegraph-opt examples/conv_block.mlir -p O2 --pass-statistics
	@echo "== the tile level (ascend910b preset): each conv+relu group a cube kernel over GM, tiled into loops of load3d / mmad / fixpipe; one whose epilogue needs the vector unit becomes a mix kernel (AIC + AIV parts, a GM workspace, cross-core flags) =="
	$(BIN)/tilegraph-opt examples/conv_block.mlir -p 'O2,lower-graph-to-kernels,tile-kernels{platform=ascend910b}'
	@echo "== tilegraph-run: light ResNet-50 (random weights), O2 checked after every pass, compiled to tiled kernels for ascend910b, run, vs onnxruntime, with the cycle model's estimate =="
	$(PY) examples/make_light_model.py resnet50 build/light_resnet50.onnx
	$(BIN)/tilegraph-run build/light_resnet50.onnx -p O2 --check-each-pass --compare --no-format-report --profile 10
	@echo "== the same tiles through xDSL's interpreter (every tile op interpreted) =="
	$(BIN)/tilegraph-run build/light_resnet50.onnx --executor interpret --compare --no-format-report
	@echo "== dynamic shapes: a recogniser x[b, 3, 48, w] swept over the batch, one Session; guards decide when to recompile =="
	$(PY) examples/make_dynamic_model.py build/recogniser.onnx
	$(BIN)/tilegraph-run build/recogniser.onnx --sweep x:0=1..6 --dim w=160 --compare

test: $(STAMP) $(PLUGIN_STAMP)
	$(PY) -m pytest -q
	$(BIN)/lit -q tests/filecheck
	$(PY) -m pytest -q examples/plugin
	$(BIN)/lit -q examples/plugin/tests

test-all: $(STAMP) $(PLUGIN_STAMP) chromium
	HYPOTHESIS_PROFILE=thorough $(PY) -m pytest -q -m ''
	$(BIN)/lit -q tests/filecheck
	$(PY) -m pytest -q examples/plugin
	$(BIN)/lit -q examples/plugin/tests

# Headless Chromium for the explorer's browser test: Debian's package, where this runs as root
# with apt; otherwise the test says why it is skipped.
chromium:
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
	  && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } \
	  || echo "chromium is not installed: the explorer's browser test will be skipped"

explorer-screenshot: $(STAMP) chromium
	$(PY) examples/make_light_model.py resnet50 build/light_resnet50.onnx
	$(BIN)/tilegraph-opt build/light_resnet50.onnx -p O2 --explore build/explore_resnet50.html -o /dev/null
	chromium --headless --disable-gpu --no-sandbox --hide-scrollbars --window-size=1280,1600 \
	  --screenshot=docs/images/explorer-resnet50.png file://$(CURDIR)/build/explore_resnet50.html

bench: $(STAMP)
	$(PY) benchmarks/compile_throughput.py
	$(PY) benchmarks/reference_vs_onnxruntime.py
	$(PY) benchmarks/format_strategies.py
	$(PY) benchmarks/graph_optimizations.py
	$(PY) benchmarks/pass_timing.py
	$(PY) benchmarks/tile_execution.py
	$(PY) benchmarks/memory_planning.py
	$(PY) benchmarks/cycle_model.py
	$(PY) benchmarks/onnx_node_suite.py
	$(PY) benchmarks/startup.py

lint: $(STAMP)
	$(BIN)/ruff check tilegraph tests benchmarks examples docs/generators
	$(BIN)/ruff format --check tilegraph tests benchmarks examples docs/generators
	$(BIN)/pyright tilegraph docs/generators

docs: $(STAMP)
	$(PY) -m docs.generators.generated_docs

viz-seed: $(STAMP)
	@mkdir -p build
	$(BIN)/tilegraph-viz examples/conv_block.mlir -p 'format{strategy=naive}' -o build/seed-naive.mmd
	$(BIN)/tilegraph-viz examples/conv_block.mlir -p 'format{strategy=ge}' -o build/seed-ge.mmd
	$(BIN)/tilegraph-viz examples/conv_block.mlir -p 'format{strategy=naive}' --format dot -o build/seed-naive.dot
	$(BIN)/tilegraph-viz examples/conv_block.mlir -p 'format{strategy=ge}' --format dot -o build/seed-ge.dot
	$(BIN)/tilegraph-viz examples/conv_block.mlir -p 'format{strategy=naive}' --format svg -o build/seed-naive.svg
	$(BIN)/tilegraph-viz examples/conv_block.mlir -p 'format{strategy=ge}' --format svg -o build/seed-ge.svg
	@echo "wrote build/seed-{naive,ge}.{mmd,dot,svg} (docs/pictures.md shows them)"

format: $(STAMP)
	$(BIN)/ruff format tilegraph tests benchmarks docs/generators
	$(BIN)/ruff check --fix tilegraph tests benchmarks docs/generators

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
