"""Graph-level passes and the named pipelines. Each pass is a module; :data:`PASSES` lists
them by name for :mod:`.registry`, which gathers every package's list."""

PASSES: dict[str, str] = {
    "O0": ".pipelines:O0Pipeline",
    "O1": ".pipelines:O1Pipeline",
    "O2": ".pipelines:O2Pipeline",
    "algebraic-simplify": ".algebraic_simplify:AlgebraicSimplifyPass",
    "apply-precision": ".apply_precision:ApplyPrecisionPass",
    "cancel-trans-data": ".cancel_trans_data:CancelTransDataPass",
    "constant-fold": ".constant_fold:ConstantFoldPass",
    "conv-forms": ".conv_forms:ConvFormsPass",
    "expand-qoperator": ".expand_qoperator:ExpandQOperatorPass",
    "expand-quantized-lstm": ".expand_quantized_lstm:ExpandQuantizedLSTMPass",
    "expand-recurrent-lengths": ".expand_recurrent_lengths:ExpandRecurrentLengthsPass",
    "fold-batchnorm": ".fold_batchnorm:FoldBatchNormPass",
    "fold-integer-ops": ".fold_integer_ops:FoldIntegerOpsPass",
    "fold-qdq": ".fold_qdq:FoldQdqPass",
    "fold-requant": ".fold_requant:FoldRequantPass",
    "fold-trans-data": ".fold_trans_data:FoldTransDataPass",
    "format": ".pipelines:FormatPipeline",
    "format-report": ".format_report:FormatReportPass",
    "fuse-dynamic-quantize": ".fuse_dynamic_quantize:FuseDynamicQuantizePass",
    "fuse-ops": ".fuse_ops:FuseOpsPass",
    "hoist-loop-elementwise": ".hoist_loop_elementwise:HoistLoopElementwisePass",
    "hoist-loop-projection": ".hoist_loop_projection:HoistLoopProjectionPass",
    "hoist-recurrent-projection": ".hoist_recurrent_projection:HoistRecurrentProjectionPass",
    "infer-origin-format": ".infer_origin_format:InferOriginFormatPass",
    "infer-shapes": ".infer_shapes:InferShapesPass",
    "insert-trans-data": ".insert_trans_data:InsertTransDataPass",
    "select-storage-format": ".select_storage_format:SelectStorageFormatPass",
    "set-target": ".set_target:SetTargetPass",
    "specialize-shapes": ".specialize_shapes:SpecializeShapesPass",
}
"""This package's passes and pipelines by ``-p`` name: ``".module:Class"`` (relative to
the package), imported only when the pass is used."""
