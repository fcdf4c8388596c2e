#pragma once
// torch's key error phrases, in one place. The core builds its messages from
// these, the C++ tests match them, and the bindings export them to Python as
// npgrad._C._error_messages so the pytest suite never retypes a phrase.

namespace npgrad::messages {

inline constexpr const char* kBackwardTwice =
    "Trying to backward through the graph a second time (or directly access "
    "saved tensors after they have already been freed). Saved intermediate "
    "values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors "
    "after calling backward.";
inline constexpr const char* kModifiedByInplace =
    "one of the variables needed for gradient computation has been modified "
    "by an inplace operation: ";
inline constexpr const char* kAnomalyHint =
    "Hint: enable anomaly detection to find the operation that failed to "
    "compute its gradient, with "
    "torch.autograd.set_detect_anomaly(True, check_nan=False).";
inline constexpr const char* kAnomalyHintEnabled =
    "Hint: the backtrace further above shows the operation that failed to "
    "compute its gradient. The variable in question was changed in there or "
    "anywhere later. Good luck!";
inline constexpr const char* kLeafInplace =
    "a leaf Variable that requires grad is being used in an in-place "
    "operation.";
inline constexpr const char* kViewOfLeafInplace =
    "a view of a leaf Variable that requires grad is being used in an "
    "in-place operation.";
inline constexpr const char* kImplicitGradScalar =
    "grad can be implicitly created only for scalar outputs";
inline constexpr const char* kNoGradFn =
    " of tensors does not require grad and does not have a grad_fn";
inline constexpr const char* kDifferentiatedNoGrad =
    "One of the differentiated Tensors does not require grad";
inline constexpr const char* kUnusedInput =
    " appears to not have been used in the graph. Set allow_unused=True if "
    "this is the desired behavior.";
inline constexpr const char* kRequiresGradFloat =
    "only Tensors of floating point and complex dtype can require gradients";
inline constexpr const char* kNonLeafRequiresGrad =
    "you can only change requires_grad flags of leaf variables.";
inline constexpr const char* kLeafMovedIntoGraph =
    "leaf variable has been moved into the graph interior";
inline constexpr const char* kNumpyRequiresGrad =
    "Can't call numpy() on Tensor that requires grad. Use "
    "tensor.detach().numpy() instead.";
inline constexpr const char* kRetainGradNoGrad =
    "can't retain_grad on Tensor that has requires_grad=False";
// Inference tensors outside inference mode (Note [Inference mode]).
inline constexpr const char* kInferenceInplace =
    "Inplace update to inference tensor outside InferenceMode is not "
    "allowed.You can make a clone to get a normal tensor before doing inplace "
    "update.See https://github.com/pytorch/rfcs/pull/17 for more details.";
inline constexpr const char* kInferenceSaved =
    "Inference tensors cannot be saved for backward. Please do not use "
    "Tensors created in inference mode in computation tracked by autograd. To "
    "work around this, you can make a clone to get a normal tensor and use it "
    "in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`.";
inline constexpr const char* kInferenceRequiresGrad =
    "Setting requires_grad=True on inference tensor outside InferenceMode is "
    "not allowed.";
inline constexpr const char* kInferenceVersion =
    "Inference tensors do not track version counter.";

}  // namespace npgrad::messages
