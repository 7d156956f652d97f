//! The device features that some accesses need: a barrier may only name a stage (or an
//! acceleration-structure read in a shader stage) whose feature the device was created with.

use super::Access;
use ash::vk;
use vk::AccessFlags2 as A;
use vk::PipelineStageFlags2 as S;

/// A set of the device features that named accesses can need. Vulkan has no query for the
/// features a `VkDevice` was created with, so the app says which it enabled
/// ([`Graph::set_device_features`](crate::Graph::set_device_features)); a graph refuses an
/// access that needs another ([`Access::device_features`]).
///
/// ```
/// use vk_baton::access::DeviceFeatures as F;
/// let rt = F::ACCELERATION_STRUCTURE | F::RAY_QUERY;
/// assert!(rt.contains(F::RAY_QUERY) && !rt.contains(F::MESH_SHADER));
/// assert_eq!(rt.names().collect::<Vec<_>>(), ["accelerationStructure", "rayQuery"]);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DeviceFeatures(u32);

/// Each feature with the name the specification gives it.
static NAMES: [(DeviceFeatures, &str); 9] = [
    (DeviceFeatures::TASK_SHADER, "taskShader"),
    (DeviceFeatures::MESH_SHADER, "meshShader"),
    (
        DeviceFeatures::ACCELERATION_STRUCTURE,
        "accelerationStructure",
    ),
    (DeviceFeatures::RAY_TRACING_PIPELINE, "rayTracingPipeline"),
    (DeviceFeatures::RAY_QUERY, "rayQuery"),
    (
        DeviceFeatures::RAY_TRACING_MAINTENANCE1,
        "rayTracingMaintenance1",
    ),
    (DeviceFeatures::MAINTENANCE8, "maintenance8"),
    (DeviceFeatures::MAINTENANCE9, "maintenance9"),
    (DeviceFeatures::UNIFIED_IMAGE_LAYOUTS, "unifiedImageLayouts"),
];

impl DeviceFeatures {
    /// No feature.
    pub const NONE: Self = Self(0);
    /// `VkPhysicalDeviceMeshShaderFeaturesEXT::taskShader`: the `TASK_SHADER_EXT` stage.
    pub const TASK_SHADER: Self = Self(1);
    /// `VkPhysicalDeviceMeshShaderFeaturesEXT::meshShader`: the `MESH_SHADER_EXT` stage.
    pub const MESH_SHADER: Self = Self(1 << 1);
    /// `VkPhysicalDeviceAccelerationStructureFeaturesKHR::accelerationStructure`: the
    /// `ACCELERATION_STRUCTURE_BUILD_KHR` stage.
    pub const ACCELERATION_STRUCTURE: Self = Self(1 << 2);
    /// `VkPhysicalDeviceRayTracingPipelineFeaturesKHR::rayTracingPipeline`: the
    /// `RAY_TRACING_SHADER_KHR` stage.
    pub const RAY_TRACING_PIPELINE: Self = Self(1 << 3);
    /// `VkPhysicalDeviceRayQueryFeaturesKHR::rayQuery`: `ACCELERATION_STRUCTURE_READ_KHR` in
    /// a shader stage other than ray tracing.
    pub const RAY_QUERY: Self = Self(1 << 4);
    /// `VkPhysicalDeviceRayTracingMaintenance1FeaturesKHR::rayTracingMaintenance1`: the
    /// `ACCELERATION_STRUCTURE_COPY_KHR` stage.
    pub const RAY_TRACING_MAINTENANCE1: Self = Self(1 << 5);
    /// `VkPhysicalDeviceMaintenance8FeaturesKHR::maintenance8` (`VK_KHR_maintenance8`): no
    /// access needs it, but a graph that knows of it records ownership transfers with
    /// `QUEUE_FAMILY_OWNERSHIP_TRANSFER_USE_ALL_STAGES`, and the semaphores around them wait
    /// at the stages that need the resource instead of `ALL_COMMANDS`
    /// ([`QueueDecl::transfers_use_all_stages`](crate::plan::QueueDecl::transfers_use_all_stages)).
    pub const MAINTENANCE8: Self = Self(1 << 6);
    /// `VkPhysicalDeviceMaintenance9FeaturesKHR::maintenance9` (`VK_KHR_maintenance9`): no
    /// access needs it, but a graph that knows of it moves buffers between queue families
    /// without ownership transfers, whose contents the feature keeps
    /// ([`QueueDecl::maintenance9`](crate::plan::QueueDecl::maintenance9)).
    pub const MAINTENANCE9: Self = Self(1 << 7);
    /// `VkPhysicalDeviceUnifiedImageLayoutsFeaturesKHR::unifiedImageLayouts`
    /// (`VK_KHR_unified_image_layouts`): no access needs it, but a graph that knows of it
    /// plans its image uses in `GENERAL` unless told otherwise
    /// ([`LayoutPolicy::General`](crate::access::LayoutPolicy::General),
    /// [`Graph::set_layout_policy`](crate::Graph::set_layout_policy)).
    pub const UNIFIED_IMAGE_LAYOUTS: Self = Self(1 << 8);

    /// Whether every feature of `other` is in `self`.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// The features of `self` that `other` lacks.
    ///
    /// ```
    /// use vk_baton::access::DeviceFeatures as F;
    /// let needed = F::ACCELERATION_STRUCTURE | F::RAY_QUERY;
    /// assert_eq!(needed.without(F::ACCELERATION_STRUCTURE), F::RAY_QUERY);
    /// ```
    pub const fn without(self, other: Self) -> Self {
        Self(self.0 & !other.0)
    }

    /// The set as bits, to keep in an atomic.
    pub(crate) const fn bits(self) -> u32 {
        self.0
    }

    /// The set of [`DeviceFeatures::bits`].
    pub(crate) const fn from_bits(bits: u32) -> Self {
        Self(bits)
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The specification's names of the features in the set, in a fixed order.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        // Borrowed, not copied into the iterator; and not walked at all for the empty set,
        // which the graph asks about for every use.
        let names: &'static [(DeviceFeatures, &str)] = if self.is_empty() { &[] } else { &NAMES };
        (names.iter())
            .filter(move |(f, _)| self.contains(*f))
            .map(|&(_, name)| name)
    }
}

impl std::ops::BitOr for DeviceFeatures {
    type Output = Self;
    fn bitor(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
}

impl std::ops::BitOrAssign for DeviceFeatures {
    fn bitor_assign(&mut self, other: Self) {
        self.0 |= other.0;
    }
}

/// Shader stages in which an acceleration-structure read is a ray query.
const RAY_QUERY_STAGES: S = S::from_raw(
    S::VERTEX_SHADER.as_raw()
        | S::TESSELLATION_CONTROL_SHADER.as_raw()
        | S::TESSELLATION_EVALUATION_SHADER.as_raw()
        | S::GEOMETRY_SHADER.as_raw()
        | S::FRAGMENT_SHADER.as_raw()
        | S::COMPUTE_SHADER.as_raw()
        | S::PRE_RASTERIZATION_SHADERS.as_raw()
        | S::TASK_SHADER_EXT.as_raw()
        | S::MESH_SHADER_EXT.as_raw(),
);

/// Each stage that needs a feature, and the features.
const STAGE_FEATURES: [(S, DeviceFeatures); 5] = [
    (S::TASK_SHADER_EXT, DeviceFeatures::TASK_SHADER),
    (S::MESH_SHADER_EXT, DeviceFeatures::MESH_SHADER),
    (
        S::ACCELERATION_STRUCTURE_BUILD_KHR,
        DeviceFeatures::ACCELERATION_STRUCTURE,
    ),
    (
        S::ACCELERATION_STRUCTURE_COPY_KHR,
        DeviceFeatures(
            DeviceFeatures::ACCELERATION_STRUCTURE.0 | DeviceFeatures::RAY_TRACING_MAINTENANCE1.0,
        ),
    ),
    (
        S::RAY_TRACING_SHADER_KHR,
        DeviceFeatures::RAY_TRACING_PIPELINE,
    ),
];

impl Access {
    /// The device features a barrier naming this access needs, for the stages of the rows of
    /// this crate's table that need one: mesh, task, ray tracing, acceleration-structure
    /// builds and copies (a copy also needs `accelerationStructure`, for the command), and
    /// `rayQuery` for an acceleration-structure read in any other shader stage (stricter than
    /// the specification where the mask also holds a ray-tracing or build stage). Derived from
    /// the flags, so raw accesses ([`Access::raw`]) with these stages are judged the same way;
    /// other stages that need a feature (geometry and tessellation shaders, transform
    /// feedback, conditional rendering, shading rate, micromaps) are not checked.
    ///
    /// ```
    /// use vk_baton::{access::DeviceFeatures as F, Access};
    /// assert_eq!(Access::MESH_SHADER_STORAGE_READ.device_features(), F::MESH_SHADER);
    /// assert_eq!(Access::COMPUTE_SHADER_ACCELERATION_STRUCTURE_READ.device_features(), F::RAY_QUERY);
    /// assert_eq!(Access::COMPUTE_SHADER_READ.device_features(), F::NONE);
    /// ```
    pub const fn device_features(&self) -> DeviceFeatures {
        let mut f = 0;
        let mut i = 0;
        while i < STAGE_FEATURES.len() {
            if self.stages.intersects(STAGE_FEATURES[i].0) {
                f |= STAGE_FEATURES[i].1 .0;
            }
            i += 1;
        }
        if self.access.intersects(A::ACCELERATION_STRUCTURE_READ_KHR)
            && self.stages.intersects(RAY_QUERY_STAGES)
        {
            f |= DeviceFeatures::RAY_QUERY.0;
        }
        DeviceFeatures(f)
    }
}
