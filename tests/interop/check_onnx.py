#!/usr/bin/python3
"""check_onnx.py MODEL... — ONNX's own checks of models moonflow exported
(Debian's python3-onnx): onnx.checker.check_model(full_check=True) and
strict shape inference (type checks, data propagation); every output
shape ONNX infers must agree with the one moonflow declared (an unknown
dim agrees with anything). Prints one line per model with its opset, IR
version and ops; exits 1 at the first failure."""
import sys
import onnx
from onnx import shape_inference


def dims(value_info):
    return [d.dim_value if d.HasField('dim_value') else None
            for d in value_info.type.tensor_type.shape.dim]


def check(path):
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    inferred = shape_inference.infer_shapes(model, check_type=True, strict_mode=True,
                                            data_prop=True)
    for declared, got in zip(model.graph.output, inferred.graph.output):
        a, b = dims(declared), dims(got)
        if len(a) != len(b) or any(x is not None and y is not None and x != y
                                   for x, y in zip(a, b)):
            raise ValueError('output %s: declared %s, ONNX infers %s' % (declared.name, a, b))
    ops = sorted({n.op_type for n in model.graph.node})
    print('%s: ok (IR %d, opset %d, %d nodes, %d initializers; %s)' %
          (path, model.ir_version, model.opset_import[0].version, len(model.graph.node),
           len(model.graph.initializer), ' '.join(ops)))


def main():
    for path in sys.argv[1:]:
        try:
            check(path)
        except Exception as e:
            print('check_onnx: %s: %s' % (path, e), file=sys.stderr)
            return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
